import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createChainClients, rpcMethods } from '../../src/chain/clients.ts';
import { rpcRequests } from '../../src/observability/metrics.ts';

/** A JSON-RPC node that answers every call (single or batch) with block 0x10. */
let server: Server;
let url: string;

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { id: number } | Array<{ id: number }>;
      const answer = (call: { id: number }) => ({ jsonrpc: '2.0', id: call.id, result: '0x10' });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const counted = async (chainId: string, method: string) =>
  (await rpcRequests.get()).values.find((v) => v.labels.chain_id === chainId && v.labels.method === method)?.value ?? 0;

describe('private_route_rpc_requests_total', () => {
  test('reads the method of a single call and of each call of a batch', { timeout: 10_000 }, () => {
    assert.deepEqual(rpcMethods('{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[]}'), ['eth_call']);
    assert.deepEqual(rpcMethods('[{"method":"eth_blockNumber"},{"method":"eth_getLogs"},{}]'), ['eth_blockNumber', 'eth_getLogs', 'unknown']);
    assert.deepEqual(rpcMethods('not json'), ['unknown']);
    assert.deepEqual(rpcMethods(undefined), []);
  });

  test('counts the calls a chain client sends, by chain and method', { timeout: 10_000 }, async () => {
    const clients = createChainClients({ '90001': url });
    const before = await counted('90001', 'eth_blockNumber');
    assert.equal(await clients.publicClient(90001).getBlockNumber({ cacheTime: 0 }), 16n);
    assert.equal(await clients.publicClient(90001).getBlockNumber({ cacheTime: 0 }), 16n);
    assert.equal(await counted('90001', 'eth_blockNumber'), before + 2);
  });

  test('every read of the head asks the node (a head cached by another caller could be a block short)', { timeout: 10_000 }, async () => {
    const clients = createChainClients({ '90002': url }, { pollingIntervalMs: 60_000 });
    const before = await counted('90002', 'eth_blockNumber');
    await clients.publicClient(90002).getBlockNumber();
    await clients.publicClient(90002).getBlockNumber();
    assert.equal(await counted('90002', 'eth_blockNumber'), before + 2);
  });
});
