/**
 * GET /openapi.json: an OpenAPI 3.1 document of the five spec endpoints and the event stream, with our additions,
 * the envelope, the error codes and the headers; and real answers of the app match both the zod schemas the
 * document is generated from and the document's own property lists (every field answered is documented, every
 * required field is answered).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { z } from 'zod';
import { writeStatus } from '../../activities/projection.ts';
import { ERROR_CODE_LIST } from '../../src/api/errorCodes.ts';
import {
  chainSchema,
  errorEnvelopeSchema,
  newTransferSchema,
  okEnvelope,
  publicTransferViewSchema,
  quoteSchema,
  reissuedStatusTokenSchema,
  tokenSchema,
  transferPageSchema,
  transferViewSchema,
} from '../../src/api/schemas.ts';
import { createAbuseLimits } from '../../src/api/abuseLimits.ts';
import { createApiKey } from '../../src/partners/apiKeys.ts';
import { call, CREATE_BODY, QUOTE_BODY, SOURCE, startHarness, type Harness } from './harness.ts';

// biome-ignore lint/suspicious/noExplicitAny: the test walks an untyped JSON document
type Json = Record<string, any>;

let h: Harness;
let app: ReturnType<Harness['api']>;
let doc: Json;
before(
  async () => {
    h = await startHarness('api-openapi');
    app = h.api();
    const response = await app.request('/openapi.json');
    assert.equal(response.status, 200);
    doc = (await response.json()) as Json;
  },
  { timeout: 120_000 },
);
after(async () => h?.close(), { timeout: 60_000 });

/** A schema with its $ref followed and its allOf parts (an extended zod object) merged into one object schema. */
function resolve(node: Json): Json {
  if (node.$ref) return resolve(doc.components.schemas[(node.$ref as string).split('/').pop()!]);
  if (!node.allOf) return node;
  const parts = (node.allOf as Json[]).map(resolve);
  return {
    type: 'object',
    properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
    required: parts.flatMap((p) => p.required ?? []),
  };
}
const operation = (method: string, path: string): Json => {
  const op = doc.paths[path]?.[method];
  assert.ok(op, `${method.toUpperCase()} ${path} is documented`);
  return op;
};
/** The `data` schema of an operation's 200 answer. */
const dataSchema = (method: string, path: string): Json =>
  resolve(resolve(operation(method, path).responses['200'].content['application/json'].schema).properties.data);

/** A real answer's fields against a document schema: nothing undocumented, nothing required missing. */
function matchesDocument(value: Json, schema: Json, what: string) {
  const properties = Object.keys(schema.properties ?? {});
  for (const key of Object.keys(value)) assert.ok(properties.includes(key), `${what}: "${key}" is answered but not documented`);
  for (const key of schema.required ?? []) assert.ok(key in value, `${what}: "${key}" is required by the document but not answered`);
}

function parses<T extends z.ZodType>(schema: T, value: unknown, what: string) {
  const result = schema.safeParse(value);
  assert.ok(result.success, `${what}: ${JSON.stringify(result.error?.issues)}`);
}

describe('the OpenAPI document', { timeout: 60_000 }, () => {
  test('is OpenAPI 3.1 with the five spec endpoints and the event stream, each summarised', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(typeof doc.info.title, 'string');
    assert.equal(typeof doc.info.version, 'string');
    const expected = [
      ['post', '/api/private-route/quote'],
      ['post', '/api/private-route'],
      ['get', '/api/private-route/{routeId}'],
      ['get', '/api/bridge/chains'],
      ['get', '/api/bridge/tokens'],
      ['get', '/api/private-route/{routeId}/events'],
      // Additions: an API key's own transfers.
      ['get', '/api/private-route'],
      ['post', '/api/private-route/{routeId}/status-token'],
    ];
    const documented = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((k) => k !== 'parameters')
        .map((method) => [method, path]),
    );
    assert.deepEqual(documented.map((e) => e.join(' ')).sort(), expected.map((e) => e.join(' ')).sort());
    const ids = new Set<string>();
    for (const [method, path] of expected) {
      const op = operation(method!, path!);
      assert.ok(op.summary && op.operationId && op.description, `${method} ${path} has a summary, an operationId and a description`);
      ids.add(op.operationId);
      // Every operation documents its failures in the envelope.
      for (const [status, answer] of Object.entries(op.responses as Json)) {
        if (Number(status) >= 400)
          assert.equal(
            resolve(answer.content['application/json'].schema).properties.code.$ref ?? 'inline',
            '#/components/schemas/ErrorCode',
            `${method} ${path} ${status}`,
          );
      }
    }
    assert.equal(ids.size, expected.length, 'operationIds are unique');
    assert.ok(operation('get', '/api/private-route/{routeId}/events').responses['200'].content['text/event-stream']);
  });

  test('documents the envelope, the error codes, the additions and the headers', () => {
    const schemas = doc.components.schemas as Json;
    assert.deepEqual(schemas.ErrorCode.enum, ERROR_CODE_LIST);
    assert.deepEqual(schemas.Error.required.sort(), ['code', 'error', 'success']);
    for (const code of ERROR_CODE_LIST) assert.ok((doc.info.description as string).includes(`\`${code}\``), `${code} is in the description's table`);

    const request = resolve(operation('post', '/api/private-route').requestBody.content['application/json'].schema);
    for (const field of [
      'sourceChainId',
      'destChainId',
      'amount',
      'amountSmallestUnits',
      'tokenSymbol',
      'destTokenSymbol',
      'tokenAddress',
      'destTokenAddress',
      'userDestinationAddress',
      'refundAddress',
      'minAnonymitySet',
      'webhookUrl',
      'externalId',
    ]) {
      assert.ok(request.properties[field], `create request documents ${field}`);
    }
    // amount or amountSmallestUnits, exactly one: neither is required by itself (the service answers 400 INVALID_AMOUNT).
    assert.deepEqual(request.required.sort(), ['destChainId', 'sourceChainId', 'userDestinationAddress']);
    const full = resolve(schemas.TransferView);
    for (const field of [
      'statusToken',
      'depositTxHash',
      'bridgeInTxHash',
      'payoutTxHash',
      'needsAttention',
      'privacy',
      'refundAddress',
      'minAnonymitySet',
      'depositTokenAddress',
      'sourceToken',
      'destToken',
      'externalId',
    ]) {
      if (field === 'statusToken') assert.ok(resolve(schemas.NewTransfer).properties[field], 'create answers statusToken');
      else assert.ok(full.properties[field], `the full view documents ${field}`);
    }
    assert.deepEqual(Object.keys(schemas.PublicTransferView.properties).sort(), ['error', 'needsAttention', 'routeId', 'status']);
    assert.ok(!('webhookUrl' in full.properties), 'the webhook URL is never answered');

    const headerNames = (method: string, path: string) =>
      (operation(method, path).parameters ?? []).filter((p: Json) => p.in === 'header').map((p: Json) => p.name);
    assert.deepEqual(headerNames('post', '/api/private-route').sort(), ['Idempotency-Key', 'X-Api-Key']);
    assert.deepEqual(headerNames('post', '/api/private-route/quote'), ['X-Api-Key']);
    assert.deepEqual(headerNames('get', '/api/private-route/{routeId}/events').sort(), ['Last-Event-ID', 'X-Api-Key', 'X-Status-Token']);
    assert.deepEqual(headerNames('get', '/api/private-route'), ['X-Api-Key']);
    assert.deepEqual(headerNames('post', '/api/private-route/{routeId}/status-token'), ['X-Api-Key']);
    assert.equal(doc.components.securitySchemes.apiKey.name, 'X-Api-Key');
    assert.deepEqual(
      operation('get', '/api/private-route')
        .parameters.filter((p: Json) => p.in === 'query')
        .map((p: Json) => p.name)
        .sort(),
      ['cursor', 'depositAddress', 'depositTxHash', 'externalId', 'limit', 'status'],
    );
    assert.deepEqual(doc.components.securitySchemes.statusToken, {
      type: 'http',
      scheme: 'bearer',
      description: doc.components.securitySchemes.statusToken.description,
    });
    assert.equal(doc.components.securitySchemes.statusTokenHeader.name, 'X-Status-Token');
    assert.ok(operation('post', '/api/private-route').responses['429'].headers['Retry-After']);
    assert.ok(operation('post', '/api/private-route').responses['409'].headers['Retry-After']);
    assert.ok(operation('post', '/api/private-route').responses['200'].headers['Idempotent-Replayed']);
    assert.ok(operation('get', '/api/private-route/{routeId}').responses['401'].headers['WWW-Authenticate']);
  });

  test('real answers match the schemas and the document: quote, create, full and public view, chains, tokens, failures', async () => {
    const quote = await call(app, 'POST', '/api/private-route/quote', QUOTE_BODY);
    assert.equal(quote.status, 200);
    parses(okEnvelope(quoteSchema), quote.body, 'quote');
    matchesDocument(quote.body.data!, dataSchema('post', '/api/private-route/quote'), 'quote');

    const created = await call(app, 'POST', '/api/private-route', { ...CREATE_BODY, refundAddress: '0x000000000000000000000000000000000000dEaD' });
    assert.equal(created.status, 200);
    parses(okEnvelope(newTransferSchema), created.body, 'create');
    matchesDocument(created.body.data!, dataSchema('post', '/api/private-route'), 'create');

    const { routeId, statusToken } = created.body.data as { routeId: string; statusToken: string };
    await writeStatus({ db: h.database.db }, { routeId, status: 'COMPLETED', seq: 7, payoutTxHash: `0x${'cd'.repeat(32)}` });
    const full = await call(app, 'GET', `/api/private-route/${routeId}`, undefined, { authorization: `Bearer ${statusToken}` });
    parses(okEnvelope(transferViewSchema), full.body, 'full view');
    matchesDocument(full.body.data!, resolve(doc.components.schemas.TransferView), 'full view');
    assert.equal(full.body.data!.payoutTxHash, `0x${'cd'.repeat(32)}`);
    assert.equal(full.body.data!.depositTxHash, null);
    const getAnswer = operation('get', '/api/private-route/{routeId}').responses['200'].content['application/json'].schema.properties.data;
    assert.deepEqual((getAnswer.anyOf ?? getAnswer.oneOf).map((s: Json) => s.$ref).sort(), [
      '#/components/schemas/PublicTransferView',
      '#/components/schemas/TransferView',
    ]);

    const anonymous = await call(app, 'GET', `/api/private-route/${routeId}`);
    parses(okEnvelope(publicTransferViewSchema), anonymous.body, 'public view');
    matchesDocument(anonymous.body.data!, doc.components.schemas.PublicTransferView, 'public view');
    assert.deepEqual(Object.keys(anonymous.body.data!).sort(), Object.keys(doc.components.schemas.PublicTransferView.properties).sort());

    const chains = await call<Json[]>(app, 'GET', '/api/bridge/chains');
    parses(okEnvelope(chainSchema.array()), chains.body, 'chains');
    for (const chain of chains.body.data!) matchesDocument(chain, resolve(dataSchema('get', '/api/bridge/chains').items), 'chain');
    const tokens = await call<Json[]>(app, 'GET', `/api/bridge/tokens?chainId=${SOURCE}`);
    parses(okEnvelope(tokenSchema.array()), tokens.body, 'tokens');
    assert.ok(tokens.body.data!.length > 0);
    for (const token of tokens.body.data!) matchesDocument(token, resolve(dataSchema('get', '/api/bridge/tokens').items), 'token');

    // A key's own transfers: the listing's page and a reissued statusToken.
    const keyed = h.api({
      abuse: await createAbuseLimits({
        db: h.database.db,
        settings: { requestsPerMinute: 0, createsPerMinute: 0, maxUnfundedPerClient: 0, publicReadsPerMinute: 0, trustProxyHops: 0 },
        logger: h.logger,
      }),
    });
    const { key } = await createApiKey(h.database.db, 'openapi-partner');
    const own = await call(keyed, 'POST', '/api/private-route', { ...CREATE_BODY, externalId: 'order-1' }, { 'X-Api-Key': key });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    const page = await call(keyed, 'GET', '/api/private-route?limit=1', undefined, { 'X-Api-Key': key });
    parses(okEnvelope(transferPageSchema), page.body, 'listing');
    matchesDocument(page.body.data!, resolve(doc.components.schemas.TransferPage), 'listing');
    for (const item of page.body.data!.items as Json[]) matchesDocument(item, resolve(doc.components.schemas.TransferView), 'listed transfer');
    const reissued = await call(keyed, 'POST', `/api/private-route/${(own.body.data as Json).routeId}/status-token`, undefined, { 'X-Api-Key': key });
    parses(okEnvelope(reissuedStatusTokenSchema), reissued.body, 'reissue');
    matchesDocument(reissued.body.data!, resolve(doc.components.schemas.ReissuedStatusToken), 'reissue');

    for (const [method, path, body] of [
      ['POST', '/api/private-route/quote', '{'],
      ['GET', '/api/bridge/tokens', undefined],
      ['GET', `/api/private-route/rt_${'0'.repeat(32)}`, undefined],
    ] as const) {
      const failure = await call(app, method, path, body);
      parses(errorEnvelopeSchema, failure.body, `${method} ${path}`);
      matchesDocument(failure.body, doc.components.schemas.Error, `${method} ${path}`);
      assert.ok(
        operation(method.toLowerCase(), path.startsWith('/api/private-route/rt_') ? '/api/private-route/{routeId}' : path).responses[String(failure.status)],
        `${method} ${path} documents its ${failure.status}`,
      );
    }
  });

  test('the documented examples are valid requests', async () => {
    const example = (schema: Json) =>
      Object.fromEntries(
        Object.entries(resolve(schema).properties as Json)
          .filter(([, p]) => p.example !== undefined)
          .map(([k, p]) => [k, p.example]),
      );
    const quoteExample = example(operation('post', '/api/private-route/quote').requestBody.content['application/json'].schema);
    assert.deepEqual(Object.keys(quoteExample).sort(), ['amount', 'destChainId', 'destTokenSymbol', 'sourceChainId', 'tokenSymbol']);
    // The example chains are real-world ones; against this deployment's chains the request is well-formed but unserved.
    const answer = await call(app, 'POST', '/api/private-route/quote', quoteExample);
    assert.equal(answer.body.code, 'UNSUPPORTED_CHAIN', JSON.stringify(answer.body));
    const served = await call(app, 'POST', '/api/private-route/quote', {
      ...quoteExample,
      sourceChainId: QUOTE_BODY.sourceChainId,
      destChainId: QUOTE_BODY.destChainId,
    });
    assert.equal(served.status, 200, JSON.stringify(served.body));
  });
});
