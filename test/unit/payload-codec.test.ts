import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { configSchema, payloadCodecProblem } from '../../src/config.ts';
import {
  AesGcmPayloadCodec,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadCodecError,
  generatePayloadCodecKey,
  payloadCodecOf,
  temporalDataConverter,
} from '../../src/temporal/codec.ts';
import { codecRoutes } from '../../src/temporal/codecServer.ts';
import { temporalConnectionOptions, temporalConnectionProblem, type TemporalConnectionConfig } from '../../src/temporal/connection.ts';

const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);
const recipient = '0x52908400098527886E0F7030069857D2E4169EE7';
const input = { routeId: 'r-1', recipient, refundAddress: recipient.toLowerCase() };
const plain = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const text = (payload: Payload) => Buffer.concat([Buffer.from(JSON.stringify(payload.metadata ?? {})), Buffer.from(payload.data ?? [])]).toString('latin1');
const metadata = (payload: Payload, key: string) => Buffer.from(payload.metadata?.[key] ?? []).toString();

describe('payload codec', { timeout: 20_000 }, () => {
  const codec = new AesGcmPayloadCodec({ a: keyA }, 'a');

  test('round trip: the whole payload (metadata and data) is encrypted under the key id, a fresh nonce each time', async () => {
    const [encrypted] = await codec.encode([plain(input)]);
    assert.ok(encrypted);
    assert.equal(metadata(encrypted, 'encoding'), ENCRYPTED_ENCODING);
    assert.equal(metadata(encrypted, KEY_ID_METADATA), 'a');
    assert.ok(!/json\/plain/.test(text(encrypted)), 'the original encoding is inside the ciphertext');
    assert.ok(!text(encrypted).toLowerCase().includes(recipient.slice(2).toLowerCase()));
    const [again] = await codec.encode([plain(input)]);
    assert.notDeepEqual(Buffer.from(again!.data!), Buffer.from(encrypted.data!));
    const [decoded] = await codec.decode([encrypted]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded!), input);
  });

  test('a tampered payload or a relabelled key id fails authentication', async () => {
    const [encrypted] = await codec.encode([plain(input)]);
    const data = Buffer.from(encrypted!.data!);
    data[20]! ^= 1;
    await assert.rejects(codec.decode([{ ...encrypted, data }]), (e: unknown) => e instanceof PayloadCodecError && /failed authentication/.test(e.message));
    const both = new AesGcmPayloadCodec({ a: keyA, b: keyA }, 'a');
    const relabelled = { ...encrypted, metadata: { ...encrypted!.metadata, [KEY_ID_METADATA]: Buffer.from('b') } };
    await assert.rejects(both.decode([relabelled]), /failed authentication/);
  });

  test('an unknown key id is a clear error naming the id and what to do', async () => {
    const [encrypted] = await new AesGcmPayloadCodec({ old: keyB }, 'old').encode([plain(input)]);
    await assert.rejects(
      codec.decode([encrypted!]),
      (e: unknown) => e instanceof PayloadCodecError && /key id "old"/.test(e.message) && /PAYLOAD_CODEC_KEYS/.test(e.message),
    );
  });

  test('payloads written before the codec pass through', async () => {
    const before = plain(input);
    const [decoded] = await codec.decode([before]);
    assert.equal(decoded, before);
  });

  test('rotation: after switching the encrypting id, the old key still decodes and new payloads use the new one', async () => {
    const [old] = await codec.encode([plain(input)]);
    const rotated = new AesGcmPayloadCodec({ a: keyA, b: keyB }, 'b');
    const [fresh] = await rotated.encode([plain(input)]);
    assert.equal(metadata(fresh!, KEY_ID_METADATA), 'b');
    const decoded = await rotated.decode([old!, fresh!]);
    assert.deepEqual(
      decoded.map((p) => defaultPayloadConverter.fromPayload(p)),
      [input, input],
    );
  });

  test('configuration: keys are required unless PAYLOAD_CODEC=off, the encrypting id must exist, keys are 32 bytes', () => {
    const parse = (env: Record<string, string>) =>
      configSchema.pick({ PAYLOAD_CODEC: true, PAYLOAD_CODEC_KEYS: true, PAYLOAD_CODEC_KEY_ID: true }).safeParse(env);
    const missing = parse({});
    assert.ok(missing.success);
    assert.match(payloadCodecProblem(missing.data) ?? '', /PAYLOAD_CODEC_KEYS and PAYLOAD_CODEC_KEY_ID must be set/);
    const off = parse({ PAYLOAD_CODEC: 'off' });
    assert.ok(off.success);
    assert.equal(payloadCodecProblem(off.data), null);
    assert.equal(payloadCodecOf(off.data), null);
    const key = generatePayloadCodecKey();
    const wrongId = parse({ PAYLOAD_CODEC_KEYS: JSON.stringify({ k1: key }), PAYLOAD_CODEC_KEY_ID: 'k2' });
    assert.ok(wrongId.success);
    assert.match(payloadCodecProblem(wrongId.data) ?? '', /PAYLOAD_CODEC_KEY_ID "k2" is not a key id/);
    const short = parse({ PAYLOAD_CODEC_KEYS: JSON.stringify({ k1: Buffer.alloc(16).toString('base64') }), PAYLOAD_CODEC_KEY_ID: 'k1' });
    assert.ok(!short.success);
    assert.ok(!JSON.stringify(short.error.issues).includes(Buffer.alloc(16).toString('base64')), 'the message never repeats the key');
    const good = parse({ PAYLOAD_CODEC_KEYS: JSON.stringify({ k1: key }), PAYLOAD_CODEC_KEY_ID: 'k1' });
    assert.ok(good.success && payloadCodecOf(good.data) instanceof AesGcmPayloadCodec);
  });
});

describe('Temporal connection settings', { timeout: 20_000 }, () => {
  const base: TemporalConnectionConfig = { TEMPORAL_ADDRESS: 'temporal.example:7233' } as TemporalConnectionConfig;
  const pem = (label: string) => `-----BEGIN ${label}-----\nAAAA\n-----END ${label}-----\n`;

  test('plain by default; a certificate without its key (or the reverse) names both variables', () => {
    assert.deepEqual(temporalConnectionOptions(base), { address: 'temporal.example:7233' });
    assert.match(temporalConnectionProblem({ ...base, TEMPORAL_TLS_CERT: pem('CERTIFICATE') }) ?? '', /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY/);
    assert.match(temporalConnectionProblem({ ...base, TEMPORAL_TLS_KEY: pem('PRIVATE KEY') }) ?? '', /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY/);
    assert.match(temporalConnectionProblem({ ...base, TEMPORAL_TLS_CA: '/nonexistent/ca.pem' }) ?? '', /TEMPORAL_TLS_CA must be a readable PEM file/);
  });

  test('mTLS from files or inline PEM, with CA and server name; an API key implies TLS', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'temporal-tls-'));
    try {
      await writeFile(path.join(dir, 'client.pem'), pem('CERTIFICATE'));
      await writeFile(path.join(dir, 'client.key'), pem('PRIVATE KEY'));
      const fromFiles = {
        ...base,
        TEMPORAL_TLS_CERT: path.join(dir, 'client.pem'),
        TEMPORAL_TLS_KEY: path.join(dir, 'client.key'),
        TEMPORAL_TLS_CA: pem('CERTIFICATE'),
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      };
      assert.equal(temporalConnectionProblem(fromFiles), null);
      const options = temporalConnectionOptions(fromFiles);
      assert.ok(typeof options.tls === 'object' && options.tls !== null);
      assert.equal(Buffer.from(options.tls.clientCertPair!.crt).toString(), pem('CERTIFICATE'));
      assert.equal(Buffer.from(options.tls.clientCertPair!.key).toString(), pem('PRIVATE KEY'));
      assert.equal(Buffer.from(options.tls.serverRootCACertificate!).toString(), pem('CERTIFICATE'));
      assert.equal(options.tls.serverNameOverride, 'temporal.internal');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    assert.deepEqual(temporalConnectionOptions({ ...base, TEMPORAL_API_KEY: 'k' }), { address: 'temporal.example:7233', tls: true, apiKey: 'k' });
    assert.match(temporalConnectionProblem({ ...base, TEMPORAL_TLS: false, TEMPORAL_API_KEY: 'k' }) ?? '', /TEMPORAL_TLS=false contradicts/);
  });
});

describe('codec endpoint', { timeout: 20_000 }, () => {
  const token = 'x'.repeat(40);
  const uiOrigin = 'http://127.0.0.1:8233';
  const codec = new AesGcmPayloadCodec({ a: keyA }, 'a');
  const wire = (p: Payload) => ({
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: Buffer.from(p.data ?? []).toString('base64'),
  });
  const post = (app: ReturnType<typeof codecRoutes>, route: string, body: unknown, headers: Record<string, string> = {}) =>
    app.request(route, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  test('decodes with the right bearer token; refuses a missing or wrong one with 401 in the envelope', async () => {
    const app = codecRoutes({ codec, authToken: token, uiOrigin });
    const [encrypted] = await codec.encode([plain(input)]);
    const body = { payloads: [wire(encrypted!)] };
    for (const headers of [
      {} as Record<string, string>,
      { authorization: `Bearer ${'y'.repeat(40)}` },
      { authorization: token },
      { authorization: `Bearer ${token}x` },
    ]) {
      const refused = await post(app, '/decode', body, headers);
      assert.equal(refused.status, 401);
      assert.equal(((await refused.json()) as { success: boolean }).success, false);
    }
    const ok = await post(app, '/decode', body, { authorization: `Bearer ${token}` });
    assert.equal(ok.status, 200);
    const decoded = (await ok.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    assert.equal(Buffer.from(decoded.payloads[0]!.metadata.encoding!, 'base64').toString(), 'json/plain');
    assert.deepEqual(JSON.parse(Buffer.from(decoded.payloads[0]!.data, 'base64').toString()), input);
    const encoded = await post(app, '/encode', { payloads: [wire(plain(input))] }, { authorization: `Bearer ${token}` });
    const back = (await encoded.json()) as { payloads: { metadata: Record<string, string> }[] };
    assert.equal(Buffer.from(back.payloads[0]!.metadata.encoding!, 'base64').toString(), ENCRYPTED_ENCODING);
    const bad = await post(app, '/decode', { payloads: 'nope' }, { authorization: `Bearer ${token}` });
    assert.equal(bad.status, 400);
  });

  test("CORS for the Web UI's origin, preflight included; the UI origin needs no token only when trusted (local stack)", async () => {
    const app = codecRoutes({ codec, authToken: token, uiOrigin });
    const preflight = await app.request('/decode', {
      method: 'OPTIONS',
      headers: { origin: uiOrigin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), uiOrigin);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /X-Namespace/);
    const foreign = await app.request('/decode', { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    const [encrypted] = await codec.encode([plain(input)]);
    assert.equal((await post(app, '/decode', { payloads: [wire(encrypted!)] }, { origin: uiOrigin })).status, 401);
    const trusting = codecRoutes({ codec, authToken: token, uiOrigin, trustUiOrigin: true });
    assert.equal((await post(trusting, '/decode', { payloads: [wire(encrypted!)] }, { origin: uiOrigin })).status, 200);
    assert.equal((await post(trusting, '/decode', { payloads: [wire(encrypted!)] }, { origin: 'https://evil.example' })).status, 401);
  });
});

describe('failures', { timeout: 20_000 }, () => {
  test('through the data converter every client and worker uses, a failure keeps its message and stack trace only inside the encrypted payload', async () => {
    const { ApplicationFailure } = await import('@temporalio/common');
    const { loadDataConverter, encodeErrorToFailure, decodeOptionalFailureToOptionalError } = await import(
      '@temporalio/common/lib/internal-non-workflow/index.js'
    );
    // Loads the failure converter module by its path, as the worker does.
    const dataConverter = loadDataConverter(temporalDataConverter(new AesGcmPayloadCodec({ a: keyA }, 'a')));
    const failure = await encodeErrorToFailure(dataConverter, ApplicationFailure.nonRetryable(`refund to ${recipient} failed`));
    const stored = JSON.stringify(failure, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));
    assert.equal(failure.message, 'Encoded failure');
    assert.equal(failure.stackTrace, '');
    assert.ok(!stored.toLowerCase().includes(recipient.slice(2).toLowerCase()), stored);
    assert.match(stored, /binary\/encrypted/);
    const decoded = await decodeOptionalFailureToOptionalError(dataConverter, failure);
    assert.equal(decoded?.message, `refund to ${recipient} failed`);
  });
});
