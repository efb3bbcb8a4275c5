import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HttpRequestError, RpcRequestError } from 'viem';
import { createLogger } from '../../src/logger.ts';
import { ForwardingLogger } from '../../src/observability/temporalRuntime.ts';

const RPC_KEY = 'rpc-key-7f3a9c1e5b2d4f6a8c0e';

/** The Temporal SDK's lines through the Runtime logger, as the worker installs it, into captured JSON lines. */
function sdkLogger() {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
  return { lines, sdk: new ForwardingLogger(() => logger) };
}

describe("the Temporal SDK's own log lines", () => {
  test("'Activity failed' with a viem RPC error whose URL holds the provider's key: the key is not logged, the host is", () => {
    const { lines, sdk } = sdkLogger();
    const url = `https://eth-mainnet.example.com/v2/${RPC_KEY}?apikey=${RPC_KEY}`;
    const cause = new HttpRequestError({ url, body: { method: 'eth_sendRawTransaction', params: ['0x02'] }, status: 500, details: 'upstream error' });
    const error = new RpcRequestError({ url, body: { method: 'eth_call' }, error: { code: -32000, message: `failed at ${url}` } });
    Object.assign(error, { cause });
    sdk.warn('Activity failed', { error, activityType: 'unshield', workflowId: 'rt_00000000000000000000000000000000', durationMs: 12 });
    assert.equal(lines.length, 1);
    assert.ok(!lines[0]!.includes(RPC_KEY), lines[0]);
    const entry = JSON.parse(lines[0]!) as {
      level: string;
      msg: string;
      routeId: string;
      error: { name: string; message: string; stack: string; cause: { url: string } };
    };
    assert.equal(entry.level, 'warn');
    assert.equal(entry.routeId, 'rt_00000000000000000000000000000000');
    assert.equal(entry.error.name, 'RpcRequestError');
    assert.match(entry.error.message, /https:\/\/eth-mainnet\.example\.com\/…/);
    assert.match(entry.error.stack, /RpcRequestError/);
    assert.equal(entry.error.cause.url, 'https://eth-mainnet.example.com/…');
  });

  test('credentials in a URL are dropped too, and circular metadata still logs', () => {
    const { lines, sdk } = sdkLogger();
    const meta: Record<string, unknown> = { target: `wss://user:${RPC_KEY}@node.example.com/ws` };
    meta.self = meta;
    sdk.error('connection failed', meta);
    assert.ok(!lines[0]!.includes(RPC_KEY), lines[0]);
    assert.match(lines[0]!, /wss:\/\/node\.example\.com\/…/);
  });
});
