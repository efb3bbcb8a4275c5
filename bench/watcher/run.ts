/**
 * The deposit watcher on a busy chain: RPC calls and logs fetched per hour by (a) the old read, every ERC-20
 * Transfer log of each block (eth_getLogs with no filter, recipients looked up afterwards), and (b) the watcher as it
 * is (activities/depositWatcher.ts: only the logs into the deposit addresses it watches, 1000 addresses a call).
 *
 * One anvil chain with two real ERC-20s (deposits and strays) and four contracts that emit unrelated Transfer logs
 * between random addresses (`--traffic` per block, spread over the four); `--watched` routes await a deposit, a few
 * of which are paid while the chain is busy, plus a stray token into one of them. After each mined block each reader
 * runs one pass (the watcher's real activity, `runForSeconds: 0`, on Postgres), through a JSON-RPC transport that
 * counts calls by method and the bytes and logs returned, and that refuses an eth_getLogs answer of more than 10,000
 * logs as hosted providers do (the reader then halves its range). Per hour assumes 2 s blocks (Base) and the
 * watcher's 1 s poll: 1,800 passes with a new block, and 1,800 with only eth_blockNumber. Both readers must find
 * exactly the deposits that were sent, or the bench exits 1.
 *
 *   npm run bench:watcher -- [--traffic 0,100,1000] [--watched 10,2000] [--blocks 20] [--json]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { sql } from 'drizzle-orm';
import solc from 'solc';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  erc20Abi,
  getAddress,
  http,
  parseAbi,
  toHex,
  type Address,
  type Hex,
  type Log,
  type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { depositWatcherActivities, REORG_MARGIN_BLOCKS, TRANSFER_EVENT } from '../../activities/depositWatcher.ts';
import type { ActivityDeps } from '../../activities/deps.ts';
import { testTokenAbi, testTokenBytecode } from '../../devnet/artifacts/TestToken.ts';
import { DEVNET_ACCOUNTS, startScratchAnvil } from '../../devnet/chains.ts';
import { freePort } from '../../devnet/ports.ts';
import { startLocalPostgres } from '../../devnet/postgres.ts';
import { rpcMethods, type ChainClients } from '../../src/chain/clients.ts';
import { connectDatabase, migrateDatabase, type Database } from '../../src/db/client.ts';
import { depositTokens, depositTransfers, depositWatchCursors, transfers } from '../../src/db/schema.ts';
import { transferRow } from '../../test/support/database.ts';
import { runMain, table } from '../support/figures.ts';
import { progress } from '../support/stack.ts';

const { values } = parseArgs({
  options: {
    traffic: { type: 'string', default: '0,100,1000' },
    watched: { type: 'string', default: '10,2000' },
    blocks: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  },
});
const list = (text: string, flag: string) =>
  text.split(',').map((part) => {
    const value = Number(part);
    if (!Number.isInteger(value) || value < 0) {
      console.error(`${flag} must be a comma-separated list of non-negative integers (got ${text})`);
      process.exit(2);
    }
    return value;
  });
const trafficLevels = list(values.traffic, '--traffic');
const watchedCounts = list(values.watched, '--watched');
const blocksPerScenario = Math.max(1, list(values.blocks, '--blocks')[0]!);

const CHAIN_ID = 7_113_201;
/** What hosted providers answer at most per eth_getLogs (Alchemy, Infura): more is an error, and the reader halves its range. */
const PROVIDER_LOG_CAP = 10_000;
const BLOCK_SECONDS = 2;
const POLL_SECONDS = 1;
const PASSES_WITH_A_BLOCK_PER_HOUR = 3600 / BLOCK_SECONDS;
const IDLE_POLLS_PER_HOUR = 3600 / POLL_SECONDS - PASSES_WITH_A_BLOCK_PER_HOUR;
const NOISE_CONTRACTS = 4;
const DEPOSIT_AMOUNT = 10_000_000n;

/** Emits `count` Transfer logs between pseudo-random addresses: another token's traffic, as the watcher sees it. */
const NOISE_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract NoiseToken {
    event Transfer(address indexed from, address indexed to, uint256 value);
    function emitTransfers(uint256 count, uint256 seed) external {
        for (uint256 i = 0; i < count; i++) {
            uint256 h = uint256(keccak256(abi.encode(seed, i)));
            emit Transfer(address(uint160(h)), address(uint160(h >> 96)), h % 1e9);
        }
    }
}`;
const noiseAbi = parseAbi(['function emitTransfers(uint256 count, uint256 seed)']);

function compileNoise(): Hex {
  const input = {
    language: 'Solidity',
    sources: { 'NoiseToken.sol': { content: NOISE_SOURCE } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'shanghai', outputSelection: { '*': { '*': ['evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  return `0x${output.contracts['NoiseToken.sol']!.NoiseToken!.evm.bytecode.object}`;
}

/** What one reader's JSON-RPC traffic cost. */
interface RpcTally {
  calls: Map<string, number>;
  refusedGetLogs: number;
  logsReturned: number;
  bytesReturned: number;
}
const newTally = (): RpcTally => ({ calls: new Map(), refusedGetLogs: 0, logsReturned: 0, bytesReturned: 0 });

/** A viem client that counts into `tally` and refuses eth_getLogs answers above PROVIDER_LOG_CAP. */
function countingClient(rpcUrl: string, chain: ReturnType<typeof defineChain>, tally: () => RpcTally): PublicClient {
  return createPublicClient({
    chain,
    cacheTime: 0,
    transport: http(rpcUrl, {
      retryCount: 0,
      timeout: 120_000,
      fetchFn: async (input, init) => {
        const methods = rpcMethods(init?.body);
        for (const method of methods) tally().calls.set(method, (tally().calls.get(method) ?? 0) + 1);
        const response = await fetch(input, init);
        const text = await response.text();
        if (methods.length === 1 && methods[0] === 'eth_getLogs') {
          const answer = JSON.parse(text) as { id: number; result?: unknown[] };
          if (answer.result && answer.result.length > PROVIDER_LOG_CAP) {
            tally().refusedGetLogs++;
            const refusal = { jsonrpc: '2.0', id: answer.id, error: { code: -32005, message: `query returned more than ${PROVIDER_LOG_CAP} results` } };
            return new Response(JSON.stringify(refusal), { status: 200, headers: { 'content-type': 'application/json' } });
          }
          tally().logsReturned += answer.result?.length ?? 0;
        }
        tally().bytesReturned += text.length;
        return new Response(text, { status: response.status, headers: response.headers });
      },
    }),
  }) as PublicClient;
}

/**
 * The read the watcher did before issue 35 (a copy of its loop, for comparison only): every Transfer log of each
 * range, any recipient; the recipients were then looked up among the deposit addresses (here: in memory).
 */
function unfilteredReader(client: PublicClient, watched: Set<string>, startAt: bigint) {
  const LOG_BLOCK_RANGE = 500n;
  let range = LOG_BLOCK_RANGE;
  let next = startAt;
  const found = new Set<string>();
  return {
    found,
    async pass(): Promise<void> {
      const safe = await client.getBlockNumber();
      if (safe < next) return;
      for (let from = next > REORG_MARGIN_BLOCKS ? next - REORG_MARGIN_BLOCKS : 0n; from <= safe; ) {
        const to = from + range - 1n < safe ? from + range - 1n : safe;
        let logs: Log<bigint, number, false, typeof TRANSFER_EVENT>[];
        try {
          logs = await client.getLogs({ event: TRANSFER_EVENT, fromBlock: from, toBlock: to, strict: false });
        } catch (error) {
          if (range === 1n) throw error;
          range = range / 2n > 1n ? range / 2n : 1n;
          continue;
        }
        for (const log of logs) {
          if (log.topics.length !== 3 || !log.args.to) continue;
          const to = getAddress(log.args.to);
          if (watched.has(to)) found.add(depositKey(log.transactionHash!, to, getAddress(log.address)));
        }
        if (to + 1n > next) next = to + 1n;
        from = to + 1n;
        if (range < LOG_BLOCK_RANGE) range *= 2n;
      }
    },
  };
}

const depositKey = (txHash: string, to: string, token: string) => `${txHash.toLowerCase()} ${getAddress(to)} ${getAddress(token)}`;

interface ScenarioFigures {
  trafficPerBlock: number;
  watched: number;
  reader: 'unfiltered (before)' | 'filtered (now)';
  passes: number;
  getLogsPerPass: number;
  refusedPerPass: number;
  logsPerPass: number;
  kbPerPass: number;
  callsPerHour: number;
  mbPerHour: number;
  depositsFound: number;
}

runMain(async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-watcher-'));
  progress('starting anvil and Postgres');
  const [anvil, postgres] = await Promise.all([
    startScratchAnvil('bench-watcher', CHAIN_ID),
    startLocalPostgres({ databaseUrl: process.env.BENCH_DATABASE_URL, dataDir, port: await freePort(), ephemeral: true }),
  ]);
  await migrateDatabase(postgres.url);
  const database = connectDatabase(postgres.url);
  try {
    const results = await runScenarios(anvil.rpcUrl, database.db);
    if (values.json) {
      console.log(JSON.stringify({ blockSeconds: BLOCK_SECONDS, providerLogCap: PROVIDER_LOG_CAP, results }, null, 2));
      return;
    }
    console.log(
      `Deposit watcher on a busy chain: ${blocksPerScenario} blocks per scenario, one pass per block; per hour at ${BLOCK_SECONDS} s blocks and a ${POLL_SECONDS} s poll; eth_getLogs answers over ${PROVIDER_LOG_CAP} logs refused\n`,
    );
    console.log(
      table([
        ['transfers/block', 'watched', 'reader', 'getLogs/pass', 'refused/pass', 'logs/pass', 'kB/pass', 'RPC calls/hour', 'MB/hour', 'deposits found'],
        ...results.map((r) => [
          r.trafficPerBlock,
          r.watched,
          r.reader,
          r.getLogsPerPass,
          r.refusedPerPass,
          r.logsPerPass,
          r.kbPerPass,
          r.callsPerHour.toLocaleString('en-US'),
          r.mbPerHour.toLocaleString('en-US'),
          r.depositsFound,
        ]),
      ]),
    );
    console.log('\nBoth readers found exactly the deposits sent (own token and stray) in every scenario.');
  } finally {
    await database.close();
    await Promise.all([anvil.stop(), postgres.stop()]);
    await rm(dataDir, { recursive: true, force: true });
  }
});

async function runScenarios(rpcUrl: string, db: Database): Promise<ScenarioFigures[]> {
  const chain = defineChain({
    id: CHAIN_ID,
    name: 'bench-watcher',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const faucet = privateKeyToAccount(DEVNET_ACCOUNTS.faucet);
  const wallet = createWalletClient({ account: faucet, chain, transport: http(rpcUrl) });
  const client = createPublicClient({ chain, transport: http(rpcUrl, { timeout: 60_000 }), pollingInterval: 50 }) as PublicClient;
  const mined = async (hash: Hex) => {
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== 'success') throw new Error(`setup transaction ${hash} reverted`);
    return receipt;
  };

  progress('deploying two ERC-20s and the traffic contracts');
  const deployToken = async (name: string, symbol: string) => {
    const address = getAddress(
      (await mined(await wallet.deployContract({ abi: testTokenAbi, bytecode: testTokenBytecode, args: [name, symbol, 6] }))).contractAddress!,
    );
    await mined(await wallet.writeContract({ address, abi: testTokenAbi, functionName: 'mint', args: [faucet.address, 10n ** 18n] }));
    return address;
  };
  const usdc = await deployToken('USD Coin', 'USDC');
  const other = await deployToken('Other', 'OTHER');
  const noiseBytecode = compileNoise();
  const noise: Address[] = [];
  for (let i = 0; i < NOISE_CONTRACTS; i++) {
    noise.push(getAddress((await mined(await wallet.deployContract({ abi: [], bytecode: noiseBytecode }))).contractAddress!));
  }

  // Blocks are mined by the bench: each holds its traffic and deposits together.
  await client.request({ method: 'evm_setAutomine' as never, params: [false] as never });
  let nonce = await client.getTransactionCount({ address: faucet.address, blockTag: 'pending' });
  let seed = 1n;
  const mineBlock = async (traffic: number, payments: { token: Address; to: Address; amount: bigint }[]) => {
    const hashes: Hex[] = [];
    for (let i = 0; i < NOISE_CONTRACTS && traffic > 0; i++) {
      const count = BigInt(Math.floor(traffic / NOISE_CONTRACTS) + (i < traffic % NOISE_CONTRACTS ? 1 : 0));
      if (count === 0n) continue;
      hashes.push(
        await wallet.writeContract({
          address: noise[i]!,
          abi: noiseAbi,
          functionName: 'emitTransfers',
          args: [count, seed++],
          nonce: nonce++,
          gas: 8_000_000n,
        }),
      );
    }
    for (const p of payments) {
      hashes.push(
        await wallet.writeContract({ address: p.token, abi: erc20Abi, functionName: 'transfer', args: [p.to, p.amount], nonce: nonce++, gas: 100_000n }),
      );
    }
    await client.request({ method: 'evm_mine' as never, params: [] as never });
    for (const hash of hashes) await mined(hash);
    return hashes.slice(hashes.length - payments.length);
  };

  const results: ScenarioFigures[] = [];
  let scenario = 0;
  for (const watchedCount of watchedCounts) {
    for (const traffic of trafficLevels) {
      scenario++;
      progress(`scenario ${scenario}: ${traffic} unrelated transfers per block, ${watchedCount} watched addresses`);
      await db.execute(sql`truncate ${transfers}, ${depositTransfers}, ${depositTokens}, ${depositWatchCursors}`);
      const routes = Array.from({ length: watchedCount }, (_, i) =>
        transferRow(scenario * 100_000 + i, {
          routeId: `rt_bench_${scenario}_${i}`,
          sourceChainId: CHAIN_ID,
          sourceToken: usdc,
          amount: DEPOSIT_AMOUNT.toString(),
          depositAddress: privateKeyToAccount(generatePrivateKey()).address,
        }),
      );
      for (let i = 0; i < routes.length; i += 1_000) await db.insert(transfers).values(routes.slice(i, i + 1_000));
      const watched = new Set(routes.map((r) => getAddress(r.depositAddress)));

      // Past the reorg margin of the last scenario's blocks, so each reads only its own.
      await client.request({ method: 'anvil_mine' as never, params: [toHex(Number(REORG_MARGIN_BLOCKS) + 2)] as never });
      const startAt = (await client.getBlockNumber()) + 1n;
      await db.insert(depositWatchCursors).values({ chainId: CHAIN_ID, nextBlock: Number(startAt) });

      let tally = newTally();
      const before = countingClient(rpcUrl, chain, () => tally);
      const unfiltered = unfilteredReader(before, watched, startAt);
      const unfilteredTally = newTally();
      const filteredTally = newTally();
      const filteredClients: ChainClients = { chain: () => chain, publicClient: () => countingClient(rpcUrl, chain, () => tally) };
      const notifier = { depositObserved: async () => {}, privacyObserved: async () => {} };
      // The watcher uses only these of the activities' dependencies.
      const deps = { db, chains: filteredClients, pollIntervalMs: 1_000, confirmationsOf: () => 0, notifier } as unknown as ActivityDeps;
      const watcher = depositWatcherActivities(deps);
      const quiet = () => {};
      const activity = new MockActivityEnvironment(undefined, { logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet } });

      // Three deposits of the route's token and one stray token, spread over the blocks.
      const sent = new Set<string>();
      const plan = new Map<number, { token: Address; to: Address; amount: bigint }>();
      const payees = [...watched].filter((_, i) => i % Math.max(1, Math.floor(watched.size / 3)) === 0).slice(0, 3);
      for (const [i, to] of payees.entries()) plan.set(Math.floor(((i + 1) * blocksPerScenario) / 4), { token: usdc, to, amount: DEPOSIT_AMOUNT });
      plan.set(blocksPerScenario - 1, { token: other, to: payees[0]!, amount: 5n });

      for (let block = 0; block < blocksPerScenario; block++) {
        const payment = plan.get(block);
        const [hash] = await mineBlock(traffic, payment ? [payment] : []);
        if (payment && hash) sent.add(depositKey(hash, payment.to, payment.token));
        tally = unfilteredTally;
        await unfiltered.pass();
        tally = filteredTally;
        await activity.run(() => watcher.watchDeposits({ chainId: CHAIN_ID, runForSeconds: 0 }));
      }

      const ownDeposits = await db.select().from(depositTransfers);
      const strays = await db.select().from(depositTokens);
      const addressOf = new Map(routes.map((r) => [r.routeId!, r.depositAddress]));
      const filteredFound = new Set([
        ...ownDeposits.map((d) => depositKey(d.txHash, addressOf.get(d.routeId)!, usdc)),
        ...strays.map((d) => depositKey(d.txHash, addressOf.get(d.routeId)!, d.token)),
      ]);
      for (const [reader, found] of [
        ['unfiltered', unfiltered.found],
        ['filtered', filteredFound],
      ] as const) {
        const missed = [...sent].filter((k) => !found.has(k));
        const extra = [...found].filter((k) => !sent.has(k));
        if (missed.length > 0 || extra.length > 0) {
          throw new Error(`the ${reader} read found other deposits than were sent: missed ${missed.join(', ') || 'none'}; extra ${extra.join(', ') || 'none'}`);
        }
      }

      for (const [reader, t, found] of [
        ['unfiltered (before)', unfilteredTally, unfiltered.found.size],
        ['filtered (now)', filteredTally, filteredFound.size],
      ] as const) {
        const per = (n: number) => n / blocksPerScenario;
        const getLogs = t.calls.get('eth_getLogs') ?? 0;
        // Per hour: eth_blockNumber and eth_getLogs; a deposit's balance read (eth_call) follows the deposits, not the chain.
        const callsPerPass = per(getLogs + (t.calls.get('eth_blockNumber') ?? 0));
        results.push({
          trafficPerBlock: traffic,
          watched: watchedCount,
          reader,
          passes: blocksPerScenario,
          getLogsPerPass: round1(per(getLogs)),
          refusedPerPass: round1(per(t.refusedGetLogs)),
          logsPerPass: Math.round(per(t.logsReturned)),
          kbPerPass: round1(per(t.bytesReturned) / 1024),
          callsPerHour: Math.round(callsPerPass * PASSES_WITH_A_BLOCK_PER_HOUR + IDLE_POLLS_PER_HOUR),
          mbPerHour: Math.round((per(t.bytesReturned) * PASSES_WITH_A_BLOCK_PER_HOUR) / 1024 / 1024),
          depositsFound: found,
        });
      }
    }
  }
  return results;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
