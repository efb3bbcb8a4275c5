import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeEventTopics,
  encodePacked,
  erc20Abi,
  getAddress,
  keccak256,
  toHex,
  type Hex,
  type Log,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ChainClients } from '../../src/chain/clients.ts';
import { TransactionRevertedError, type SendRequest, type TxSender } from '../../src/chain/txSender.ts';
import { BridgeRouteError, BridgeUnavailableError } from '../../src/providers/bridge.ts';
import { messageTransmitterV2Abi, tokenMessengerV2Abi } from '../../src/providers/cctp/abi.ts';
import { CctpBurnMismatchError, createCctpBridge, type CctpBridgeOptions } from '../../src/providers/cctp/adapter.ts';
import { CCTP_V2_CONTRACTS, cctpNetwork, validateCctpChains, withLocalChains } from '../../src/providers/cctp/chains.ts';
import { canonicalBps, feeForAmount, maxFeeFor } from '../../src/providers/cctp/fees.ts';
import { createIrisClient, IrisRateLimitedError, IrisRequestError, IrisUnavailableError, parseRetryAfter } from '../../src/providers/cctp/iris.ts';
import { addressToBytes32, parseBurnMessageBody, parseMessageHeader } from '../../src/providers/cctp/message.ts';

const IRIS = 'https://iris.test';
const BASE = 8453;
const ARBITRUM = 42161;
const mainnet = cctpNetwork('mainnet');
const base = mainnet.find((c) => c.chainId === BASE)!;
const arbitrum = mainnet.find((c) => c.chainId === ARBITRUM)!;
const RECIPIENT = getAddress('0x000000000000000000000000000000000000bEEF');
const NONCE: Hex = keccak256(toHex('circle-assigned nonce'));
const ATTESTATION: Hex = `0x${'ab'.repeat(65)}`;
const BURN_TX: Hex = keccak256(toHex('burn tx'));

// --- fakes ---------------------------------------------------------------------------------------

type Handler = (url: URL) => Response | Promise<Response>;

function fakeFetch(handler: Handler) {
  const calls: URL[] = [];
  const fetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    calls.push(url);
    return handler(url);
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const iris = (handler: Handler) => {
  const fake = fakeFetch(handler);
  return { client: createIrisClient({ baseUrl: `${IRIS}/`, fetch: fake.fetch }), calls: fake.calls };
};

const FEES = [
  { finalityThreshold: 1000, minimumFee: 1.3 },
  { finalityThreshold: 2000, minimumFee: 0 },
];

/** Records sends and, like the real TxSender, returns the same transaction for a repeated (routeId, step). */
function fakeSender(receiptLogs: (request: SendRequest) => Log[] = () => []) {
  const sends: SendRequest[] = [];
  const recorded = new Map<string, Hex>();
  let fail: Error | null = null;
  const sender: TxSender = {
    async send(request) {
      sends.push(request);
      if (fail) throw fail;
      const key = `${request.routeId}/${request.step}`;
      const txHash = recorded.get(key) ?? keccak256(toHex(key));
      recorded.set(key, txHash);
      const receipt = { status: 'success', transactionHash: txHash, logs: receiptLogs(request) } as unknown as TransactionReceipt;
      return { txHash, receipt };
    },
    async intent(routeId, step) {
      const txHash = recorded.get(`${routeId}/${step}`);
      return txHash ? { txHash } : null;
    },
  };
  return {
    sender,
    sends,
    recorded,
    failWith: (error: Error) => {
      fail = error;
    },
  };
}

/** A public client answering only what mint() reads: usedNonces and MessageReceived logs. */
function fakeClients(state: { used: bigint[]; mintTx?: Hex }) {
  const reads: unknown[] = [];
  const client = {
    async readContract(args: { functionName: string; args: unknown[] }) {
      reads.push(args);
      assert.equal(args.functionName, 'usedNonces');
      return state.used.length > 1 ? state.used.shift()! : state.used[0]!;
    },
    async getBlockNumber() {
      return 50_000n;
    },
    async getContractEvents(args: { eventName: string; args: { nonce: Hex }; fromBlock: bigint }) {
      assert.equal(args.eventName, 'MessageReceived');
      assert.equal(args.args.nonce, NONCE);
      assert.equal(args.fromBlock, 40_000n);
      return state.mintTx ? [{ transactionHash: state.mintTx }] : [];
    },
  };
  const clients: ChainClients = {
    publicClient: () => client as unknown as PublicClient,
    chain: () => {
      throw new Error('not used');
    },
  };
  return { clients, reads };
}

function bridge(overrides: Partial<CctpBridgeOptions> & Pick<CctpBridgeOptions, 'sender' | 'clients'>, handler: Handler = () => json(FEES)) {
  return createCctpBridge({
    iris: createIrisClient({ baseUrl: IRIS, fetch: fakeFetch(handler).fetch }),
    chains: mainnet,
    finality: 'fast',
    ...overrides,
  });
}

const noClients = fakeClients({ used: [0n] }).clients;

/** A v2 message as Iris returns it once attested: Circle's nonce and the executed finality filled in. */
function v2Message(opts: { sourceDomain?: number; destinationDomain?: number; nonce?: Hex; amount?: bigint } = {}): Hex {
  const body = encodePacked(
    ['uint32', 'bytes32', 'bytes32', 'uint256', 'bytes32', 'uint256', 'uint256', 'uint256'],
    [1, addressToBytes32(base.usdc), addressToBytes32(RECIPIENT), opts.amount ?? 100_000_000n, addressToBytes32(RECIPIENT), 15_600n, 13_000n, 0n],
  );
  return encodePacked(
    ['uint32', 'uint32', 'uint32', 'bytes32', 'bytes32', 'bytes32', 'bytes32', 'uint32', 'uint32', 'bytes'],
    [
      1,
      opts.sourceDomain ?? base.domain,
      opts.destinationDomain ?? arbitrum.domain,
      opts.nonce ?? NONCE,
      addressToBytes32(base.tokenMessenger),
      addressToBytes32(arbitrum.tokenMessenger),
      `0x${'00'.repeat(32)}`,
      1000,
      1000,
      body,
    ],
  );
}

/** The DepositForBurn log TokenMessengerV2 emits for a burn. */
function depositForBurnLog(args: { amount: bigint; destinationDomain: number; maxFee: bigint; depositor: Hex }): Log {
  const topics = encodeEventTopics({
    abi: tokenMessengerV2Abi,
    eventName: 'DepositForBurn',
    args: { burnToken: base.usdc, depositor: args.depositor, minFinalityThreshold: 1000 },
  });
  const data = encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'bytes32' }, { type: 'uint32' }, { type: 'bytes32' }, { type: 'bytes32' }, { type: 'uint256' }, { type: 'bytes' }],
    [args.amount, addressToBytes32(RECIPIENT), args.destinationDomain, addressToBytes32(arbitrum.tokenMessenger), `0x${'00'.repeat(32)}`, args.maxFee, '0x'],
  );
  return { address: base.tokenMessenger, topics, data, logIndex: 0, transactionIndex: 0, blockNumber: 1n } as unknown as Log;
}

// --- tests ---------------------------------------------------------------------------------------

describe('CCTP fee math', () => {
  test('minimumFee decimals are kept exactly', () => {
    assert.equal(canonicalBps(1.3), '1.3');
    assert.equal(canonicalBps('1.30'), '1.3');
    assert.equal(canonicalBps(14), '14');
    assert.equal(canonicalBps(0), '0');
    assert.equal(canonicalBps(1e-7), '0.0000001');
    assert.equal(canonicalBps('2.5e1'), '25');
    assert.throws(() => canonicalBps(-1));
    assert.throws(() => canonicalBps('abc'));
  });

  test('fee = ceil(amount × bps / 10 000), fractional bps included', () => {
    assert.equal(feeForAmount(1_000_000_000n, '1.3'), 130_000n); // 1 000 USDC at 1.3 bps = 0.13 USDC
    assert.equal(feeForAmount(1_000_000_000n, '1'), 100_000n);
    assert.equal(feeForAmount(12_345n, '1'), 2n); // 1.2345 rounds up
    assert.equal(feeForAmount(1n, '0.5'), 1n);
    assert.equal(feeForAmount(10_000_000_000_000n, '14'), 14_000_000_000n);
    assert.equal(feeForAmount(5_000_000n, '0'), 0n);
  });

  test('maxFee = fee + 20 % (rounded up), at least +1 for fast, 0 for a free standard burn', () => {
    assert.equal(maxFeeFor(130_000n, 'fast'), 156_000n);
    assert.equal(maxFeeFor(7n, 'fast'), 9n);
    assert.equal(maxFeeFor(0n, 'fast'), 1n);
    assert.equal(maxFeeFor(0n, 'standard'), 0n);
    assert.equal(maxFeeFor(100n, 'fast', 1000), 110n);
    assert.throws(() => maxFeeFor(1n, 'fast', -1));
  });
});

describe('Iris client', () => {
  test('getFees reads the bare array and picks the fast and standard tiers', async () => {
    const { client, calls } = iris(() => json(FEES));
    const fees = await client.getFees(6, 3);
    assert.equal(calls[0]?.pathname, '/v2/burn/USDC/fees/6/3');
    assert.deepEqual(fees, {
      fast: { finalityThreshold: 1000, minimumFeeBps: '1.3' },
      standard: { finalityThreshold: 2000, minimumFeeBps: '0' },
    });
  });

  test('getFees accepts string fees, a data envelope and a missing tier', async () => {
    const { client } = iris(() => json({ data: [{ finalityThreshold: 2000, minimumFee: '0' }] }));
    assert.deepEqual(await client.getFees(0, 6), { fast: null, standard: { finalityThreshold: 2000, minimumFeeBps: '0' } });
  });

  test('messages: 404 and an empty list are not_found', async () => {
    const { client, calls } = iris(() => json({ error: 'Message not found' }, 404));
    assert.deepEqual(await client.getMessages(6, BURN_TX), { state: 'not_found' });
    assert.equal(calls[0]?.pathname, '/v2/messages/6');
    assert.equal(calls[0]?.searchParams.get('transactionHash'), BURN_TX);
    const empty = iris(() => json({ messages: [] }));
    assert.deepEqual(await empty.client.getMessages(6, BURN_TX), { state: 'not_found' });
  });

  test('messages: PENDING attestation / pending_confirmations is pending', async () => {
    const { client } = iris(() =>
      json({
        messages: [
          { message: '0x', eventNonce: '0', attestation: 'PENDING', status: 'pending_confirmations', cctpVersion: 2, delayReason: 'insufficient_fee' },
        ],
      }),
    );
    assert.deepEqual(await client.getMessages(6, BURN_TX), { state: 'pending', eventNonce: '0', delayReason: 'insufficient_fee' });
  });

  test('messages: complete carries the attested message and attestation', async () => {
    const message = v2Message();
    const { client } = iris(() =>
      json({ messages: [{ message, eventNonce: NONCE, attestation: ATTESTATION, status: 'complete', cctpVersion: 2, decodedMessage: {} }] }),
    );
    assert.deepEqual(await client.getMessages(6, BURN_TX), { state: 'complete', message, attestation: ATTESTATION, eventNonce: NONCE });
  });

  test('429 → IrisRateLimitedError with the Retry-After delay (5 minutes without one)', async () => {
    const limited = iris(() => json({ error: 'Too Many Requests' }, 429, { 'retry-after': '120' }));
    await assert.rejects(limited.client.getMessages(6, BURN_TX), (error: unknown) => {
      assert.ok(error instanceof IrisRateLimitedError);
      assert.ok(error instanceof BridgeUnavailableError);
      assert.equal(error.retryAfterMs, 120_000);
      return true;
    });
    // Until the delay is over, calls fail fast without reaching Iris.
    await assert.rejects(limited.client.getFees(6, 3), (error: unknown) => error instanceof IrisRateLimitedError && error.retryAfterMs > 119_000);
    assert.equal(limited.calls.length, 1);
    const bare = iris(() => new Response('', { status: 429 }));
    await assert.rejects(bare.client.getFees(6, 3), (error: unknown) => error instanceof IrisRateLimitedError && error.retryAfterMs === 300_000);
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 30_000);
  });

  test('the rate-limit block lifts once Retry-After has passed', async () => {
    let clock = 1_000_000;
    let limited = true;
    const fake = fakeFetch(() => (limited ? json({}, 429, { 'retry-after': '5' }) : json(FEES)));
    const client = createIrisClient({ baseUrl: IRIS, fetch: fake.fetch, now: () => clock });
    await assert.rejects(client.getFees(6, 3), IrisRateLimitedError);
    limited = false;
    clock += 4_000;
    await assert.rejects(client.getFees(6, 3), (error: unknown) => error instanceof IrisRateLimitedError && error.retryAfterMs === 1_000);
    clock += 1_000;
    assert.equal((await client.getFees(6, 3)).fast?.minimumFeeBps, '1.3');
    assert.equal(fake.calls.length, 2);
  });

  test('5xx, network failures and malformed bodies → IrisUnavailableError; other 4xx → IrisRequestError', async () => {
    await assert.rejects(iris(() => new Response('bad gateway', { status: 502 })).client.getMessages(6, BURN_TX), IrisUnavailableError);
    await assert.rejects(
      iris(() => {
        throw new TypeError('fetch failed');
      }).client.getFees(6, 3),
      IrisUnavailableError,
    );
    await assert.rejects(iris(() => new Response('<html>', { status: 200 })).client.getFees(6, 3), IrisUnavailableError);
    await assert.rejects(iris(() => json({ messages: 'nope' })).client.getMessages(6, BURN_TX), IrisUnavailableError);
    await assert.rejects(iris(() => json({ error: 'Invalid domain' }, 400)).client.getFees(99, 3), IrisRequestError);
  });
});

describe('CCTP v2 messages', () => {
  test('header and burn body are read at the documented offsets', () => {
    const header = parseMessageHeader(v2Message());
    assert.equal(header.version, 1);
    assert.equal(header.sourceDomain, 6);
    assert.equal(header.destinationDomain, 3);
    assert.equal(header.nonce, NONCE); // bytes 12..44
    assert.equal(header.minFinalityThreshold, 1000);
    assert.equal(header.finalityThresholdExecuted, 1000);
    const body = parseBurnMessageBody(header.body);
    assert.equal(body.mintRecipient, RECIPIENT);
    assert.equal(body.amount, 100_000_000n);
    assert.equal(body.maxFee, 15_600n);
    assert.equal(body.feeExecuted, 13_000n);
    assert.throws(() => parseMessageHeader('0x0000'), /too short/);
  });

  test('addressToBytes32 left-pads the address', () => {
    assert.equal(addressToBytes32(RECIPIENT), `0x${'00'.repeat(12)}000000000000000000000000000000000000beef`);
  });
});

describe('CCTP bridge adapter', () => {
  const from = privateKeyToAccount(generatePrivateKey());

  test('estimateFee: live fast fee with the buffer and threshold 1000', async () => {
    const calls: URL[] = [];
    const b = bridge({ sender: fakeSender().sender, clients: noClients }, (url) => {
      calls.push(url);
      return json(FEES);
    });
    assert.deepEqual(await b.estimateFee(BASE, ARBITRUM, 100_000_000n), { fee: 13_000n, maxFee: 15_600n, finalityThreshold: 1000, minimumFeeBps: '1.3' });
    assert.equal(calls[0]?.pathname, '/v2/burn/USDC/fees/6/3');
  });

  test('estimateFee: standard is free, tiny amounts and unknown chains are route errors', async () => {
    const standard = bridge({ sender: fakeSender().sender, clients: noClients, finality: 'standard' });
    assert.deepEqual(await standard.estimateFee(BASE, ARBITRUM, 100_000_000n), { fee: 0n, maxFee: 0n, finalityThreshold: 2000, minimumFeeBps: '0' });
    const fast = bridge({ sender: fakeSender().sender, clients: noClients });
    await assert.rejects(fast.estimateFee(BASE, ARBITRUM, 1n), BridgeRouteError);
    await assert.rejects(fast.estimateFee(BASE, 7113001, 100n), BridgeRouteError);
    await assert.rejects(fast.estimateFee(BASE, BASE, 100n), BridgeRouteError);
  });

  test('burn: approve then depositForBurn under distinct steps, exact allowance, anyone may relay', async () => {
    const fake = fakeSender((req) =>
      req.step.endsWith(':burn') ? [depositForBurnLog({ amount: 100_000_000n, destinationDomain: 3, maxFee: 15_600n, depositor: from.address })] : [],
    );
    const b = bridge({ sender: fake.sender, clients: noClients });
    const input = {
      routeId: 'r1',
      step: 'bridge-out',
      srcChainId: BASE,
      dstChainId: ARBITRUM,
      from,
      amount: 100_000_000n,
      mintRecipient: RECIPIENT,
      maxFee: 15_600n,
    };
    const { txHash } = await b.burn(input);

    assert.deepEqual(
      fake.sends.map((s) => [s.step, s.to, s.chainId]),
      [
        ['bridge-out:approve', base.usdc, BASE],
        ['bridge-out:burn', base.tokenMessenger, BASE],
      ],
    );
    const approve = decodeFunctionData({ abi: erc20Abi, data: fake.sends[0]!.data! });
    assert.deepEqual(approve.args, [base.tokenMessenger, 100_000_000n]);
    const burn = decodeFunctionData({ abi: tokenMessengerV2Abi, data: fake.sends[1]!.data! });
    assert.equal(burn.functionName, 'depositForBurn');
    assert.deepEqual(burn.args, [100_000_000n, 3, addressToBytes32(RECIPIENT), base.usdc, `0x${'00'.repeat(32)}`, 15_600n, 1000]);

    // A retried activity gets the recorded burn back, and existingBurn finds it.
    assert.deepEqual(await b.burn(input), { txHash });
    assert.deepEqual(await b.existingBurn('r1', 'bridge-out'), { txHash });
    assert.equal(await b.existingBurn('r1', 'other'), null);
  });

  test('burn: a recorded burn that differs from the request is refused, never re-sent', async () => {
    const fake = fakeSender(() => [depositForBurnLog({ amount: 50_000_000n, destinationDomain: 3, maxFee: 15_600n, depositor: from.address })]);
    const b = bridge({ sender: fake.sender, clients: noClients });
    await assert.rejects(
      b.burn({ routeId: 'r1', step: 's', srcChainId: BASE, dstChainId: ARBITRUM, from, amount: 100_000_000n, mintRecipient: RECIPIENT, maxFee: 15_600n }),
      CctpBurnMismatchError,
    );
    await assert.rejects(
      b.burn({ routeId: 'r1', step: 's', srcChainId: BASE, dstChainId: ARBITRUM, from, amount: 100n, mintRecipient: RECIPIENT, maxFee: 100n }),
      BridgeRouteError,
    );
  });

  test('attestation polls Iris with the source domain', async () => {
    const calls: URL[] = [];
    const b = bridge({ sender: fakeSender().sender, clients: noClients }, (url) => {
      calls.push(url);
      return json({ error: 'not found' }, 404);
    });
    assert.deepEqual(await b.attestation(ARBITRUM, BURN_TX), { state: 'not_found' });
    assert.equal(calls[0]?.pathname, '/v2/messages/3');
  });

  test('mint: sends receiveMessage keyed by (routeId, step) when the nonce is unused', async () => {
    const fake = fakeSender();
    const { clients, reads } = fakeClients({ used: [0n] });
    const b = bridge({ sender: fake.sender, clients });
    const message = v2Message();
    const result = await b.mint({ routeId: 'r1', step: 'mint', dstChainId: ARBITRUM, message, attestation: ATTESTATION, relayer: from });
    assert.equal(result.alreadyMinted, false);
    assert.equal(result.txHash, fake.recorded.get('r1/mint'));
    assert.equal(fake.sends.length, 1);
    assert.equal(fake.sends[0]?.to, arbitrum.messageTransmitter);
    assert.equal(fake.sends[0]?.chainId, ARBITRUM);
    const call = decodeFunctionData({ abi: messageTransmitterV2Abi, data: fake.sends[0]!.data! });
    assert.deepEqual(call.args, [message, ATTESTATION]);
    assert.deepEqual((reads[0] as { args: unknown[] }).args, [NONCE]);
  });

  test('mint: a used nonce returns the existing mint and sends nothing', async () => {
    const fake = fakeSender();
    const mintTx = keccak256(toHex('someone else minted'));
    const b = bridge({ sender: fake.sender, clients: fakeClients({ used: [1n], mintTx }).clients });
    const result = await b.mint({ routeId: 'r1', step: 'mint', dstChainId: ARBITRUM, message: v2Message(), attestation: ATTESTATION, relayer: from });
    assert.deepEqual(result, { txHash: mintTx, alreadyMinted: true });
    assert.equal(fake.sends.length, 0);
  });

  test('mint: our own recorded mint is settled, not skipped', async () => {
    const fake = fakeSender();
    fake.recorded.set('r1/mint', keccak256(toHex('ours')));
    const b = bridge({ sender: fake.sender, clients: fakeClients({ used: [1n] }).clients });
    const result = await b.mint({ routeId: 'r1', step: 'mint', dstChainId: ARBITRUM, message: v2Message(), attestation: ATTESTATION, relayer: from });
    assert.deepEqual(result, { txHash: keccak256(toHex('ours')), alreadyMinted: false });
  });

  test('mint: losing the race to another relayer ends as alreadyMinted', async () => {
    const fake = fakeSender();
    fake.failWith(new TransactionRevertedError('reverted'));
    const b = bridge({ sender: fake.sender, clients: fakeClients({ used: [0n, 1n] }).clients });
    const result = await b.mint({ routeId: 'r1', step: 'mint', dstChainId: ARBITRUM, message: v2Message(), attestation: ATTESTATION, relayer: from });
    assert.deepEqual(result, { txHash: null, alreadyMinted: true });
  });

  test('mint: a failed send with the nonce still unused is rethrown', async () => {
    const fake = fakeSender();
    fake.failWith(new TransactionRevertedError('reverted'));
    const b = bridge({ sender: fake.sender, clients: fakeClients({ used: [0n] }).clients });
    await assert.rejects(
      b.mint({ routeId: 'r1', step: 'mint', dstChainId: ARBITRUM, message: v2Message(), attestation: ATTESTATION, relayer: from }),
      TransactionRevertedError,
    );
  });

  test('mint: refuses a message for another domain and an unattested (nonce 0) message', async () => {
    const b = bridge({ sender: fakeSender().sender, clients: noClients });
    const args = { routeId: 'r1', step: 'mint', dstChainId: ARBITRUM, attestation: ATTESTATION, relayer: from };
    await assert.rejects(b.mint({ ...args, message: v2Message({ destinationDomain: 2 }) }), /domain 2/);
    await assert.rejects(b.mint({ ...args, message: v2Message({ nonce: `0x${'00'.repeat(32)}` }) }), /no nonce/);
  });
});

describe('CCTP chain configuration', () => {
  test('real domains', () => {
    const domainOf = Object.fromEntries(mainnet.map((c) => [c.chainId, c.domain]));
    assert.deepEqual(
      { ethereum: domainOf[1], avalanche: domainOf[43114], op: domainOf[10], arbitrum: domainOf[42161], base: domainOf[8453], polygon: domainOf[137] },
      { ethereum: 0, avalanche: 1, op: 2, arbitrum: 3, base: 6, polygon: 7 },
    );
    const testDomains = Object.fromEntries(cctpNetwork('testnet').map((c) => [c.chainId, c.domain]));
    assert.deepEqual(
      [testDomains[11155111], testDomains[43113], testDomains[11155420], testDomains[421614], testDomains[84532], testDomains[80002]],
      [0, 1, 2, 3, 6, 7],
    );
  });

  test('unique ids and domains, checksummed addresses, one contract pair per environment', () => {
    for (const env of ['mainnet', 'testnet'] as const) {
      const chains = cctpNetwork(env);
      assert.equal(new Set(chains.map((c) => c.domain)).size, chains.length);
      assert.equal(new Set(chains.map((c) => c.chainId)).size, chains.length);
      for (const c of chains) {
        for (const address of [c.usdc, c.tokenMessenger, c.messageTransmitter]) assert.equal(address, getAddress(address));
        assert.equal(c.tokenMessenger, CCTP_V2_CONTRACTS[env].tokenMessenger);
        assert.equal(c.messageTransmitter, CCTP_V2_CONTRACTS[env].messageTransmitter);
      }
    }
    assert.notEqual(CCTP_V2_CONTRACTS.mainnet.tokenMessenger, CCTP_V2_CONTRACTS.testnet.tokenMessenger);
  });

  test('local stack chains are added from manifest entries, with names when given', () => {
    const deployment = (chainId: number, domain: number) => ({
      chainId,
      domain,
      tokenMessenger: getAddress(`0x${'11'.repeat(20)}`),
      messageTransmitter: getAddress(`0x${'22'.repeat(20)}`),
      usdc: `0x${'33'.repeat(20)}` as const,
    });
    const chains = withLocalChains(
      [],
      [deployment(7113001, 100), deployment(7113002, 101)],
      [{ chainId: 7113001, name: 'devnet-source', displayName: 'Devnet Source' }],
    );
    assert.deepEqual(
      chains.map((c) => [c.chainId, c.name, c.domain, c.usdc]),
      [
        [7113001, 'devnet-source', 100, getAddress(`0x${'33'.repeat(20)}`)],
        [7113002, 'local-7113002', 101, getAddress(`0x${'33'.repeat(20)}`)],
      ],
    );
    assert.throws(() => withLocalChains([], [deployment(7113001, 100), deployment(7113002, 100)]), /domain 100/);
    assert.throws(() => withLocalChains(mainnet, [deployment(8453, 100)]), /8453/);
    assert.throws(() => validateCctpChains([{ ...base, usdc: '0x833589FCD6eDb6E08f4c7C32D4f71b54bdA02913' }]), /usdc/);
  });
});
