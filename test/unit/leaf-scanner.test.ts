import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateMerkleProof } from '@0xbow/privacy-pools-core-sdk';
import { createPublicClient, defineChain, encodeAbiParameters, encodeEventTopics, http, toHex, type Hex, type PublicClient } from 'viem';
import type { ChainClients } from '../../src/chain/clients.ts';
import { poolAbi } from '../../src/providers/privacy-pools/abi.ts';
import { createLeafScanner, FINAL_DEPTH } from '../../src/providers/privacy-pools/pool/leafScanner.ts';
import type { LeafStore, StoredLeaves } from '../../src/providers/privacy-pools/pool/leafStore.ts';
import type { PrivacyPoolsOptions } from '../../src/providers/privacy-pools/pool/options.ts';

/**
 * The pool's leaf scan against a JSON-RPC node that refuses eth_getLogs over more than `maxRange` blocks (as many
 * providers do): the scanner halves its range until the node answers, and still finds every leaf.
 */

const POOL = '0x00000000000000000000000000000000000000aa';
const HEAD = 30_000n;
const LEAVES = [
  { block: 5n, leaf: 111n },
  { block: 12_345n, leaf: 222n },
  { block: 29_999n, leaf: 333n },
];
const root = generateMerkleProof(
  LEAVES.map((l) => l.leaf),
  LEAVES[0]!.leaf,
).root;

let server: Server;
let url: string;
let maxRange = 3_000n;
const ranges: { from: bigint; to: bigint; refused: boolean }[] = [];

function leafLog(index: number): Record<string, unknown> {
  const { block, leaf } = LEAVES[index]!;
  return {
    address: POOL,
    topics: encodeEventTopics({ abi: poolAbi, eventName: 'LeafInserted' }),
    data: encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }], [BigInt(index + 1), leaf, root]),
    blockNumber: toHex(block),
    blockHash: `0x${'11'.repeat(32)}`,
    transactionHash: `0x${(index + 1).toString(16).padStart(64, '0')}`,
    transactionIndex: '0x0',
    logIndex: '0x0',
    removed: false,
  };
}

function answer(call: { id: number; method: string; params: unknown[] }): Record<string, unknown> {
  const ok = (result: unknown) => ({ jsonrpc: '2.0', id: call.id, result });
  if (call.method === 'eth_chainId') return ok('0x1');
  if (call.method === 'eth_blockNumber') return ok(toHex(HEAD));
  if (call.method === 'eth_call') return ok(encodeAbiParameters([{ type: 'uint256' }], [root]));
  if (call.method === 'eth_getLogs') {
    const filter = call.params[0] as { fromBlock: Hex; toBlock: Hex };
    const [from, to] = [BigInt(filter.fromBlock), BigInt(filter.toBlock)];
    const refused = to - from + 1n > maxRange;
    ranges.push({ from, to, refused });
    if (refused) return { jsonrpc: '2.0', id: call.id, error: { code: -32602, message: `query exceeds max block range ${maxRange}` } };
    return ok(LEAVES.flatMap((l, i) => (l.block >= from && l.block <= to ? [leafLog(i)] : [])));
  }
  return { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: `no ${call.method}` } };
}

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body) as Parameters<typeof answer>[0] | Parameters<typeof answer>[0][];
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function scanner(store?: LeafStore) {
  const chain = defineChain({ id: 1, name: 'fake', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } });
  const client = createPublicClient({ chain, transport: http(url, { retryCount: 0 }), cacheTime: 0 }) as PublicClient;
  const clients: ChainClients = { chain: () => chain, publicClient: () => client };
  // The scan uses only these of the pool's options.
  return createLeafScanner({ chainId: 1, fromBlock: 0n, clients } as unknown as PrivacyPoolsOptions, POOL, store);
}

describe('the pool leaf scan', () => {
  test('reads 10,000 blocks a call from a node that takes them', { timeout: 10_000 }, async () => {
    maxRange = 10_000n;
    ranges.length = 0;
    const { leaves } = await scanner().scan();
    assert.deepEqual(
      leaves,
      LEAVES.map((l) => l.leaf),
    );
    assert.equal(ranges.length, 4); // blocks 0 to 30,000
    assert.ok(ranges.every((r) => !r.refused));
  });

  test('halves its range while the node refuses it, doubles back after each answer, and finds every leaf', { timeout: 10_000 }, async () => {
    maxRange = 3_000n;
    ranges.length = 0;
    const { leaves } = await scanner().scan();
    assert.deepEqual(
      leaves,
      LEAVES.map((l) => l.leaf),
    );
    assert.deepEqual(
      ranges.slice(0, 3).map((r) => [Number(r.to - r.from + 1n), r.refused]),
      [
        [10_000, true],
        [5_000, true],
        [2_500, false],
      ],
    );
    // The answered ranges cover every block from the deployment to the head once.
    const answered = ranges.filter((r) => !r.refused);
    assert.equal(answered[0]!.from, 0n);
    assert.equal(answered.at(-1)!.to, HEAD);
    for (let i = 1; i < answered.length; i++) assert.equal(answered[i]!.from, answered[i - 1]!.to + 1n);
  });

  /** The store's contract in memory (the Postgres one is tested in test/integration/leaf-store.test.ts). */
  function memoryStore(initial: StoredLeaves | null = null) {
    let kept = initial;
    const store: LeafStore = {
      load: async () => kept && { leaves: [...kept.leaves], scannedTo: kept.scannedTo },
      save: async (_pool, fromIndex, leaves, scannedTo) => {
        kept = { leaves: [...(kept?.leaves ?? []).slice(0, fromIndex), ...leaves], scannedTo };
      },
      clear: async () => {
        kept = null;
      },
    };
    return { store, kept: () => kept };
  }

  test('keeps the final leaves; a worker that starts later reads only the blocks since', { timeout: 10_000 }, async () => {
    maxRange = 10_000n;
    const memory = memoryStore();
    ranges.length = 0;
    await scanner(memory.store).scan();
    // Leaves 64 blocks below the head are final: the one at block 29,999 is not kept yet.
    assert.deepEqual(memory.kept(), { leaves: [111n, 222n], scannedTo: HEAD - FINAL_DEPTH });
    ranges.length = 0;
    const { leaves } = await scanner(memory.store).scan();
    assert.deepEqual(leaves, [111n, 222n, 333n]);
    assert.deepEqual(
      ranges.map((r) => [r.from, r.to]),
      [[HEAD - FINAL_DEPTH + 1n, HEAD]],
      'the second worker reads the 64 blocks since the kept cursor, not 30,000',
    );
  });

  test('kept leaves that do not match the root are read again from once (a reorg near the head), then dropped and the pool scanned from its deployment', {
    timeout: 10_000,
  }, async () => {
    maxRange = 10_000n;
    const memory = memoryStore({ leaves: [111n, 999n], scannedTo: 20_000n });
    const wrong = scanner(memory.store);
    ranges.length = 0;
    await assert.rejects(wrong.scan(), /do not match its root/);
    await assert.rejects(wrong.scan(), /do not match its root/);
    assert.deepEqual(
      ranges.map((r) => r.from),
      [20_001n, 20_001n],
      'the second scan reads again from the kept cursor, not from the deployment',
    );
    assert.equal(memory.kept(), null, 'then the store is cleared');
    ranges.length = 0;
    const { leaves } = await wrong.scan();
    assert.deepEqual(leaves, [111n, 222n, 333n]);
    assert.equal(ranges[0]!.from, 0n);
    assert.deepEqual(memory.kept(), { leaves: [111n, 222n], scannedTo: HEAD - FINAL_DEPTH });
  });
});
