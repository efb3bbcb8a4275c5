import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type Address,
  ContractFunctionRevertedError,
  encodeAbiParameters,
  encodeErrorResult,
  encodeEventTopics,
  type Hex,
  HttpRequestError,
  keccak256,
  toHex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { TransactionRevertedError } from '../../src/chain/txSender.ts';
import type { SendRequest, TxSender } from '../../src/chain/txSender.ts';
import { entrypointAbi, poolAbi } from '../../src/providers/privacy-pools/abi.ts';
import { approvedLabels } from '../../src/providers/privacy-pools/pool/review.ts';
import { poolContext } from '../../src/providers/privacy-pools/pool/context.ts';
import type { PrivacyPoolsOptions } from '../../src/providers/privacy-pools/pool/options.ts';
import { ragequit } from '../../src/providers/privacy-pools/pool/ragequit.ts';
import type { PoolNote } from '../../src/providers/privacyPool.ts';

// Pool actions with injected fakes (no chain, no prover): which ragequit attempts are signed and what they return,
// and how the ASP's approved set is read when the Entrypoint has no root or the node fails.

const ASSET = '0x00000000000000000000000000000000000000a5' as Address;
const POOL = '0x00000000000000000000000000000000000000b0' as Address;
const OWNER = privateKeyToAccount(keccak256(toHex('ragequit owner')));
const NOTE: PoolNote = { asset: ASSET, label: '7', commitment: '9', value: 5_000n, txHash: '0x01', blockNumber: 1n, timestamp: 1 };

function ragequitLog(value: bigint, address: Address = POOL) {
  return {
    address,
    topics: encodeEventTopics({ abi: poolAbi, eventName: 'Ragequit', args: { _ragequitter: OWNER.address } }),
    data: encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }], [9n, 7n, value]),
  };
}

/**
 * A sender whose sends of the given steps revert once mined; the others mine with a Ragequit event. `signed` lists
 * the steps signed, in order (a send with data signs; one without looks the recorded step up).
 */
function fakeSender(reverting: Set<string>, emitter: Address = POOL) {
  const recorded = new Map<string, Hex>();
  const signed: string[] = [];
  const sender: TxSender = {
    async intent(_routeId, step) {
      const txHash = recorded.get(step);
      return txHash ? { txHash } : null;
    },
    async send(request: SendRequest) {
      if (request.data !== undefined && !recorded.has(request.step)) {
        recorded.set(request.step, keccak256(toHex(request.step)));
        signed.push(request.step);
      }
      const txHash = recorded.get(request.step);
      assert.ok(txHash, `${request.step} was signed before it was looked up`);
      if (reverting.has(request.step)) throw new TransactionRevertedError(`${request.step} reverted`);
      return { txHash, receipt: { status: 'success', logs: [ragequitLog(NOTE.value, emitter)] } } as never;
    },
  };
  return { sender, signed, recorded };
}

function context(sender: TxSender, spent: () => boolean | Promise<boolean>) {
  const opts = {
    chainId: 31337,
    entrypoint: '0x00000000000000000000000000000000000000e0',
    fromBlock: 0n,
    relayFeeBps: 0,
    relayer: OWNER,
    secrets: { depositSecrets: async () => ({ nullifier: 11n, secret: 12n }) },
    clients: { publicClient: () => ({ readContract: async () => spent() }) },
    sender,
    prover: {
      proveCommitment: async () => ({
        proof: {
          pi_a: ['1', '2', '1'],
          pi_b: [
            ['1', '2'],
            ['3', '4'],
            ['1', '0'],
          ],
          pi_c: ['5', '6', '1'],
        },
        publicSignals: ['9', '1', '5000', '7'],
      }),
    },
  } as unknown as PrivacyPoolsOptions;
  const ctx = poolContext(opts);
  ctx.pools.set(ASSET.toLowerCase(), async () => ({ address: POOL, scope: 1n, asp: {} as never, stateTree: {} as never }));
  return ctx;
}

test('a ragequit attempt that reverts as it is first sent is followed by a new attempt, proved anew', { timeout: 10_000 }, async () => {
  const { sender, signed } = fakeSender(new Set(['ragequit']));
  const result = await ragequit(
    context(sender, () => false),
    { routeId: 'rt_x', owner: OWNER, note: NOTE, noteIndex: 3 },
  );
  assert.deepEqual(signed, ['ragequit', 'ragequit#2']);
  assert.deepEqual(result, { txHash: keccak256(toHex('ragequit#2')), amount: NOTE.value });
});

test('a recorded ragequit that reverted is passed over the same way', { timeout: 10_000 }, async () => {
  const { sender, signed, recorded } = fakeSender(new Set(['ragequit']));
  recorded.set('ragequit', keccak256(toHex('ragequit')));
  const result = await ragequit(
    context(sender, () => false),
    { routeId: 'rt_x', owner: OWNER, note: NOTE, noteIndex: 3 },
  );
  assert.deepEqual(signed, ['ragequit#2']);
  assert.equal(result?.amount, NOTE.value);
});

test('after a reverted attempt, a note a withdrawal spent meanwhile ends the ragequit with nothing to return', { timeout: 10_000 }, async () => {
  let spent = false;
  const { sender, signed } = fakeSender(new Set(['ragequit']));
  const reverting: TxSender = {
    intent: sender.intent,
    send: async (request) => {
      try {
        return await sender.send(request);
      } finally {
        spent = true; // the withdrawal that made it revert
      }
    },
  };
  const result = await ragequit(
    context(reverting, () => spent),
    { routeId: 'rt_x', owner: OWNER, note: NOTE, noteIndex: 3 },
  );
  assert.equal(result, null);
  assert.deepEqual(signed, ['ragequit']);
});

test("before the ASP's first root (latestRoot reverts) nothing is approved; a failing node is an error, not 'nothing approved'", {
  timeout: 10_000,
}, async () => {
  const { sender } = fakeSender(new Set());
  const pool = { address: POOL, scope: 1n, asp: { leaves: async () => ({ aspLeaves: [7n], stateTreeLeaves: [] }) } as never, stateTree: {} as never };
  const noRoot = context(sender, () => {
    throw new ContractFunctionRevertedError({
      abi: entrypointAbi,
      functionName: 'latestRoot',
      data: encodeErrorResult({ abi: entrypointAbi, errorName: 'NoRootsAvailable' }),
    });
  });
  assert.deepEqual(await approvedLabels(noRoot, pool), { labels: [], root: 0n });
  const nodeDown = context(sender, () => {
    throw new HttpRequestError({ url: 'http://127.0.0.1:1', details: 'connection refused' });
  });
  await assert.rejects(approvedLabels(nodeDown, pool), HttpRequestError);
  // A node's internal error that viem also reports as a revert (JSON-RPC -32603 with a message) is no "no root" either.
  const internal = new ContractFunctionRevertedError({ abi: entrypointAbi, functionName: 'latestRoot', message: 'internal error' });
  const failing = context(sender, () => {
    throw internal;
  });
  await assert.rejects(approvedLabels(failing, pool), (error: unknown) => error === internal);
});

test("a Ragequit event of another contract is not taken for the pool's", { timeout: 10_000 }, async () => {
  const { sender } = fakeSender(new Set(), '0x00000000000000000000000000000000000000c1');
  await assert.rejects(
    ragequit(
      context(sender, () => false),
      { routeId: 'rt_x', owner: OWNER, note: NOTE, noteIndex: 3 },
    ),
    /no Ragequit event of the pool/,
  );
});
