import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../src/config.ts';
import { signWebhook, verifyWebhook } from '../../src/webhooks/signature.ts';
import { isPrivateAddress } from '../../src/webhooks/targets.ts';

const SECRET = 'a'.repeat(64);
const BODY = '{"id":"rt_1:3","type":"transfer.status","routeId":"rt_1","status":"BRIDGING_IN","occurredAt":"2026-01-01T00:00:00.000Z"}';
const NOW = 1_800_000_000;

describe('webhook signatures', { timeout: 10_000 }, () => {
  test('the signature is Standard Webhooks\' base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>" under the decoded secret, and verifies', () => {
    const headers = signWebhook(SECRET, 'rt_1:3', BODY, NOW);
    assert.equal(headers['Webhook-Id'], 'rt_1:3');
    assert.equal(headers['Webhook-Timestamp'], String(NOW));
    const key = Buffer.from(SECRET, 'base64');
    assert.equal(headers['Webhook-Signature'], `v1,${createHmac('sha256', key).update(`rt_1:3.${NOW}.${BODY}`).digest('base64')}`);
    assert.deepEqual(verifyWebhook(SECRET, headers, BODY, { now: NOW + 10 }), { ok: true, eventId: 'rt_1:3', timestamp: NOW });
    // Node's lower-cased header object, a Fetch Headers, and the body as bytes.
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    assert.equal(verifyWebhook(SECRET, lower, Buffer.from(BODY), { now: NOW }).ok, true);
    assert.equal(verifyWebhook(SECRET, new Headers(headers), BODY, { now: NOW }).ok, true);
  });

  test('a changed body, another secret, a changed id-less header set or a malformed signature fail', () => {
    const headers = signWebhook(SECRET, 'rt_1:3', BODY, NOW);
    const tampered = verifyWebhook(SECRET, headers, BODY.replace('BRIDGING_IN', 'COMPLETED'), { now: NOW });
    assert.equal(tampered.ok, false);
    assert.match((tampered as { reason: string }).reason, /no valid v1 signature/);
    assert.equal(verifyWebhook('b'.repeat(64), headers, BODY, { now: NOW }).ok, false);
    // The timestamp is signed: moving it forward breaks the signature.
    assert.equal(verifyWebhook(SECRET, { ...headers, 'Webhook-Timestamp': String(NOW + 1) }, BODY, { now: NOW }).ok, false);
    assert.equal(verifyWebhook(SECRET, { ...headers, 'Webhook-Signature': 'v1,zz' }, BODY, { now: NOW }).ok, false);
    assert.equal(verifyWebhook(SECRET, { ...headers, 'Webhook-Signature': headers['Webhook-Signature'].replace('v1,', 'v0,') }, BODY, { now: NOW }).ok, false);
    const missing = verifyWebhook(SECRET, { 'Webhook-Id': 'rt_1:3' }, BODY, { now: NOW });
    assert.match((missing as { reason: string }).reason, /missing/);
  });

  test('a timestamp outside the tolerance is refused (replays), either side', () => {
    const headers = signWebhook(SECRET, 'rt_1:3', BODY, NOW);
    const old = verifyWebhook(SECRET, headers, BODY, { now: NOW + 301 });
    assert.equal(old.ok, false);
    assert.match((old as { reason: string }).reason, /more than 300 s/);
    assert.equal(verifyWebhook(SECRET, headers, BODY, { now: NOW - 301 }).ok, false);
    assert.equal(verifyWebhook(SECRET, headers, BODY, { now: NOW + 300 }).ok, true);
    assert.equal(verifyWebhook(SECRET, headers, BODY, { now: NOW + 3600, toleranceSeconds: 3600 }).ok, true);
  });

  test('during a secret rotation any of several space-separated signatures may match', () => {
    const oldSig = signWebhook('o'.repeat(64), 'rt_1:3', BODY, NOW)['Webhook-Signature'];
    const headers = signWebhook(SECRET, 'rt_1:3', BODY, NOW);
    assert.equal(verifyWebhook(SECRET, { ...headers, 'Webhook-Signature': `${oldSig} ${headers['Webhook-Signature']}` }, BODY, { now: NOW }).ok, true);
  });
});

describe('Standard Webhooks interoperability (the standardwebhooks npm package)', { timeout: 10_000 }, () => {
  test('its verify accepts our deliveries, ours accepts its signatures, and both refuse another secret', () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const now = Math.floor(Date.now() / 1000);
    const ours = signWebhook(secret, 'rt_9:4', BODY, now);
    const lower = Object.fromEntries(Object.entries(ours).map(([k, v]) => [k.toLowerCase(), v]));
    assert.deepEqual(new Webhook(secret).verify(BODY, lower), JSON.parse(BODY));
    assert.throws(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(BODY, lower));
    const theirs = new Webhook(secret).sign('rt_9:4', new Date(now * 1000), BODY);
    const headers = { 'webhook-id': 'rt_9:4', 'webhook-timestamp': String(now), 'webhook-signature': theirs };
    assert.deepEqual(verifyWebhook(secret, headers, BODY), { ok: true, eventId: 'rt_9:4', timestamp: now });
    // A rotation's two signatures: the library accepts the delivery with either secret.
    const old = `whsec_${randomBytes(32).toString('base64')}`;
    const both = Object.fromEntries(Object.entries(signWebhook([secret, old], 'rt_9:4', BODY, now)).map(([k, v]) => [k.toLowerCase(), v]));
    assert.deepEqual(new Webhook(old).verify(BODY, both), JSON.parse(BODY));
  });
});

describe('webhook target guard', { timeout: 10_000 }, () => {
  test('private, loopback, link-local and mapped addresses are refused; public ones are not', () => {
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      'not-an-ip',
    ]) {
      assert.equal(isPrivateAddress(ip), true, ip);
    }
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(ip), false, ip);
  });
});

describe('WEBHOOK_SIGNING_SECRET', { timeout: 10_000 }, () => {
  const base = {
    DATABASE_URL: 'postgres://localhost/none',
    HUB_CHAIN_ID: '1',
    CHAIN_RPC_URLS: '{"1":"http://127.0.0.1:1"}',
    PRIVACY_POOLS_ENTRYPOINT: '0x0000000000000000000000000000000000000001',
    PAYLOAD_CODEC: 'off',
    SIGNER_URL: 'http://127.0.0.1:3100',
    SIGNER_AUTH_TOKEN: 't'.repeat(32),
  };
  test('the worker refuses to start without it; it must be at least 32 characters; private targets are off by default', () => {
    assert.throws(() => loadConfig(base, 'worker'), /WEBHOOK_SIGNING_SECRET must be set for the worker/);
    assert.throws(() => loadConfig({ ...base, WEBHOOK_SIGNING_SECRET: 'short' }, 'worker'), /WEBHOOK_SIGNING_SECRET: must be at least 32 characters/);
    const config = loadConfig({ ...base, WEBHOOK_SIGNING_SECRET: SECRET }, 'worker');
    assert.equal(config.WEBHOOK_ALLOW_PRIVATE_TARGETS, false);
    assert.equal(config.WEBHOOK_MAX_DELAY_SECONDS, 30);
  });
});
