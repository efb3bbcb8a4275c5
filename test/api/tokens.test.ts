/**
 * Tokens by address and amounts in one rule, over real Postgres: the answers name their tokens by address; a request
 * may name a token by address instead of (or with) its symbol; a symbol two tokens of a chain share is refused with
 * the candidates listed; `amountSmallestUnits` is the integer alternative to `amount`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { count } from 'drizzle-orm';
import { transfers } from '../../src/db/schema.ts';
import { call, CREATE_BODY, DEST, QUOTE_BODY, SOURCE, SOURCE_BRIDGED_USDT, SOURCE_USDT, startHarness, type Harness } from './harness.ts';

let h: Harness;
before(
  async () => {
    h = await startHarness('api-tokens');
  },
  { timeout: 120_000 },
);
after(async () => h?.close(), { timeout: 60_000 });

type Json = Record<string, unknown>;
const USDC_SOURCE = `0x${'1'.repeat(40)}`;
const WETH_SOURCE = `0x${'2'.repeat(40)}`;
const USDC_DEST = `0x${'1'.repeat(40)}`;
/** WETH in, USDC out: a pair between two assets, so that each side's token matters. */
const WETH_TO_USDC = { sourceChainId: SOURCE, destChainId: DEST, amount: '2.5', tokenSymbol: 'WETH', destTokenSymbol: 'USDC' };
const rows = async () => (await h.database.db.select({ n: count() }).from(transfers))[0]!.n;

async function quoted(body: Json): Promise<Json> {
  const answer = await call(h.api(), 'POST', '/api/private-route/quote', body);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data!;
}

/** A quote without what differs between any two answers of one request (its id and expiry). */
const priced = ({ quoteId: _, expiresAt: __, ...rest }: Json) => rest;

describe('tokens by address', { timeout: 60_000 }, () => {
  test('discovery lists each token with its address; search by a whole address finds that token alone', async () => {
    const all = await call<Json[]>(h.api(), 'GET', `/api/bridge/tokens?chainId=${SOURCE}`);
    assert.equal(all.status, 200);
    const usdt = all.body.data!.filter((t) => t.symbol === 'USDT');
    assert.deepEqual(usdt.map((t) => t.address).sort(), [SOURCE_USDT.address, SOURCE_BRIDGED_USDT.address]);
    const one = await call<Json[]>(
      h.api(),
      'GET',
      `/api/bridge/tokens?chainId=${SOURCE}&search=${SOURCE_BRIDGED_USDT.address.toUpperCase().replace('0X', '0x')}`,
    );
    assert.deepEqual(
      one.body.data!.map((t) => t.address),
      [SOURCE_BRIDGED_USDT.address],
    );
  });

  test('quote, create and full view name both tokens by chain, address, symbol and decimals', async () => {
    const quote = await quoted(WETH_TO_USDC);
    assert.deepEqual(quote.sourceToken, { chainId: SOURCE, address: WETH_SOURCE, symbol: 'WETH', decimals: 18 });
    assert.deepEqual(quote.destToken, { chainId: DEST, address: USDC_DEST, symbol: 'USDC', decimals: 6 });

    const created = await call(h.api(), 'POST', '/api/private-route', { ...WETH_TO_USDC, userDestinationAddress: CREATE_BODY.userDestinationAddress });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const transfer = created.body.data as Json & { routeId: string; statusToken: string };
    assert.deepEqual(transfer.sourceToken, quote.sourceToken);
    assert.deepEqual(transfer.destToken, quote.destToken);
    assert.equal(transfer.depositTokenAddress, WETH_SOURCE, 'the deposit token is the source token');

    const full = await call(h.api(), 'GET', `/api/private-route/${transfer.routeId}`, undefined, { authorization: `Bearer ${transfer.statusToken}` });
    assert.equal(full.status, 200);
    assert.deepEqual(full.body.data!.sourceToken, quote.sourceToken);
    assert.deepEqual(full.body.data!.destToken, quote.destToken);
  });

  test('a quote naming its tokens by address equals the one naming them by symbol', async () => {
    const { tokenSymbol: _, destTokenSymbol: __, ...pair } = WETH_TO_USDC;
    const bySymbol = await quoted(WETH_TO_USDC);
    const byAddress = await quoted({ ...pair, tokenAddress: WETH_SOURCE, destTokenAddress: USDC_DEST });
    const byBoth = await quoted({ ...pair, tokenSymbol: 'weth', tokenAddress: WETH_SOURCE, destTokenSymbol: 'usdc', destTokenAddress: USDC_DEST });
    assert.equal(bySymbol.amount, '2500000000000000000');
    assert.deepEqual(priced(byAddress), priced(bySymbol));
    assert.deepEqual(priced(byBoth), priced(bySymbol));
    // The destination follows the source token's symbol when neither destTokenSymbol nor destTokenAddress is given.
    assert.deepEqual(priced(await quoted({ ...QUOTE_BODY, tokenAddress: USDC_SOURCE })), priced(await quoted(QUOTE_BODY)));
  });

  test('a symbol two tokens of the chain share is 400 AMBIGUOUS_TOKEN listing both with their addresses; the address picks one', async () => {
    const before = await rows();
    for (const path of ['/api/private-route/quote', '/api/private-route']) {
      const ambiguous = await call(h.api(), 'POST', path, { ...CREATE_BODY, tokenSymbol: 'usdt', destTokenSymbol: 'USDC' });
      assert.equal(ambiguous.status, 400, path);
      assert.equal(ambiguous.body.code, 'AMBIGUOUS_TOKEN', path);
      assert.match(ambiguous.body.error!, /^tokenSymbol "usdt" names 2 tokens on chain 1 \(Chain 1\): /);
      assert.ok(ambiguous.body.error!.includes(`USDT (Tether USD) ${SOURCE_USDT.address}`), ambiguous.body.error);
      assert.ok(ambiguous.body.error!.includes(`USDT (Bridged USDT) ${SOURCE_BRIDGED_USDT.address}`), ambiguous.body.error);
      assert.match(ambiguous.body.error!, /send tokenAddress/);
    }
    assert.equal(await rows(), before, 'a refused create stores nothing');

    const bridged = await quoted({ ...QUOTE_BODY, tokenAddress: SOURCE_BRIDGED_USDT.address, destTokenSymbol: 'USDC' });
    assert.equal((bridged.sourceToken as Json).address, SOURCE_BRIDGED_USDT.address);
    const native = await quoted({ ...QUOTE_BODY, tokenSymbol: 'USDT', tokenAddress: SOURCE_USDT.address, destTokenSymbol: 'USDC' });
    assert.equal((native.sourceToken as Json).address, SOURCE_USDT.address);
  });

  test('an unknown address is 400 UNSUPPORTED_TOKEN, a malformed one 400 INVALID_REQUEST, a symbol and address that disagree 400 TOKEN_MISMATCH', async () => {
    const cases: [string, Json, string, RegExp][] = [
      ['unknown source address', { tokenAddress: `0x${'e'.repeat(40)}` }, 'UNSUPPORTED_TOKEN', /^tokenAddress 0xe{40} is not a supported token on chain 1/],
      [
        'a token of another chain',
        { tokenAddress: SOURCE_USDT.address, destTokenAddress: SOURCE_USDT.address },
        'UNSUPPORTED_TOKEN',
        /^destTokenAddress 0x3{40} is not a supported token on chain 3/,
      ],
      [
        'the zero address where no native token is listed',
        { tokenAddress: `0x${'0'.repeat(40)}` },
        'UNSUPPORTED_TOKEN',
        /tokenAddress 0x0{40} is not a supported token/,
      ],
      ['malformed', { tokenAddress: '0x1234' }, 'INVALID_REQUEST', /tokenAddress must be a 0x-prefixed 20-byte hex address/],
      [
        'bad checksum',
        { destTokenAddress: '0xAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' },
        'INVALID_REQUEST',
        /destTokenAddress must be a 0x-prefixed 20-byte hex address/,
      ],
      ['not a string', { tokenAddress: 1 }, 'INVALID_REQUEST', /tokenAddress must be a string/],
      [
        'symbol and address disagree',
        { tokenSymbol: 'WETH', tokenAddress: USDC_SOURCE },
        'TOKEN_MISMATCH',
        /^tokenSymbol "WETH" disagrees with tokenAddress 0x1{40}, which is USDC/,
      ],
      [
        'on the destination too',
        { destTokenSymbol: 'USDC', destTokenAddress: WETH_SOURCE },
        'TOKEN_MISMATCH',
        /^destTokenSymbol "USDC" disagrees with destTokenAddress 0x2{40}, which is WETH/,
      ],
    ];
    for (const [what, fields, code, message] of cases) {
      for (const path of ['/api/private-route/quote', '/api/private-route']) {
        const answer = await call(h.api(), 'POST', path, { ...CREATE_BODY, ...fields });
        assert.equal(answer.status, 400, `${what} ${path}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.code, code, what);
        assert.match(answer.body.error!, message, what);
      }
    }
  });

  test('a create citing a quoteId may name the quoted token by symbol or by address; another token is 409 QUOTE_MISMATCH', async () => {
    const bySymbol = await quoted(QUOTE_BODY);
    const byAddress = await call(h.api(), 'POST', '/api/private-route', { ...CREATE_BODY, tokenAddress: USDC_SOURCE, quoteId: bySymbol.quoteId });
    assert.equal(byAddress.status, 200, JSON.stringify(byAddress.body));
    assert.equal(byAddress.body.data!.quotedOutputAmount, bySymbol.quotedOutputAmount);

    const bridged = await quoted({ ...QUOTE_BODY, tokenAddress: SOURCE_BRIDGED_USDT.address, destTokenSymbol: 'USDC' });
    const cited = { ...CREATE_BODY, destTokenSymbol: 'USDC', quoteId: bridged.quoteId };
    const same = await call(h.api(), 'POST', '/api/private-route', { ...cited, tokenAddress: SOURCE_BRIDGED_USDT.address.toUpperCase().replace('0X', '0x') });
    assert.equal(same.status, 200, JSON.stringify(same.body));
    assert.equal(same.body.data!.quotedOutputAmount, bridged.quotedOutputAmount);
    assert.equal(same.body.data!.depositTokenAddress, SOURCE_BRIDGED_USDT.address, 'only the bridged token funds it');
    const other = await call(h.api(), 'POST', '/api/private-route', { ...cited, tokenAddress: SOURCE_USDT.address });
    assert.equal(other.status, 409);
    assert.equal(other.body.code, 'QUOTE_MISMATCH');
    assert.ok(other.body.error!.includes(SOURCE_BRIDGED_USDT.address), 'the refusal names the quoted token by address');
  });
});

describe('amounts in one rule', { timeout: 60_000 }, () => {
  test('amountSmallestUnits is the same request as amount, for 6- and 18-decimal tokens', async () => {
    assert.deepEqual(priced(await quoted({ ...QUOTE_BODY, amount: undefined, amountSmallestUnits: '10000000' })), priced(await quoted(QUOTE_BODY)));
    const weth = { sourceChainId: SOURCE, destChainId: DEST, tokenSymbol: 'WETH' };
    const inUnits = await quoted({ ...weth, amountSmallestUnits: '2500000000000000000' });
    assert.deepEqual(priced(inUnits), priced(await quoted({ ...weth, amount: '2.5' })));
    assert.equal(inUnits.amount, '2500000000000000000', "the answer's amount is in smallest units whichever way it was asked");
  });

  test('a create and its cited quote agree whichever way each gives the amount', async () => {
    const quote = await quoted({ ...QUOTE_BODY, amount: '12.5' });
    const created = await call(h.api(), 'POST', '/api/private-route', {
      ...CREATE_BODY,
      amount: undefined,
      amountSmallestUnits: '12500000',
      quoteId: quote.quoteId,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.data!.amount, '12500000');
    const other = await call(h.api(), 'POST', '/api/private-route', {
      ...CREATE_BODY,
      amount: undefined,
      amountSmallestUnits: '12500001',
      quoteId: quote.quoteId,
    });
    assert.equal(other.status, 409);
    assert.equal(other.body.code, 'QUOTE_MISMATCH');
  });

  test('both, neither, or a malformed amountSmallestUnits is 400 INVALID_AMOUNT saying the rule', async () => {
    const before = await rows();
    const cases: [string, Json, RegExp][] = [
      [
        'both',
        { amount: '10', amountSmallestUnits: '10000000' },
        /either amount \(decimal whole tokens, e\.g\. "12\.5"\) or amountSmallestUnits \(integer smallest units, e\.g\. "12500000"\), not both/,
      ],
      ['both, even when they agree on nothing', { amount: '1', amountSmallestUnits: '5' }, /not both/],
      ['neither', { amount: undefined }, /amount is required .*or amountSmallestUnits/],
      ['a decimal in smallest units', { amount: undefined, amountSmallestUnits: '10.5' }, /amountSmallestUnits must be a positive integer of smallest units/],
      ['zero', { amount: undefined, amountSmallestUnits: '0' }, /amountSmallestUnits must be greater than zero/],
      ['a number', { amount: undefined, amountSmallestUnits: 10_000_000 }, /amountSmallestUnits must be a string/],
      ['too long', { amount: undefined, amountSmallestUnits: '1'.repeat(81) }, /amountSmallestUnits is too long/],
    ];
    for (const [what, fields, message] of cases) {
      for (const path of ['/api/private-route/quote', '/api/private-route']) {
        const answer = await call(h.api(), 'POST', path, { ...CREATE_BODY, ...fields });
        assert.equal(answer.status, 400, `${what} ${path}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.code, 'INVALID_AMOUNT', what);
        assert.match(answer.body.error!, message, what);
      }
    }
    assert.equal(await rows(), before, 'a refused create stores nothing');
  });
});
