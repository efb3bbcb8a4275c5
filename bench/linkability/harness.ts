/**
 * The harness: starts the real local stack on free ports with fresh state (as test/support/testStack.ts
 * does), creates and funds the transfers like clients would, waits for them, and reads the ground truth
 * (Postgres ledger, GET of its own routes). The attacker never sees anything from here but the public
 * knowledge (publicKnowledge).
 */
import { inArray } from 'drizzle-orm';
import { createPublicClient, createWalletClient, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ledgerEntries } from '../../src/db/schema.ts';
import type { LocalStack } from '../../devnet/stack.ts';
import { api, chainOf, startBenchStack, type BenchStack } from '../support/stack.ts';
import type { PublicKnowledge } from './observe.ts';
import type { RouteTruth } from './score.ts';

export interface BenchOptions {
  transfers: number;
  shared: number;
  sharedAmount: string;
  delayMaxSeconds: number;
  /** Longest random gap between two fundings (default 1.5 s). */
  gapMaxSeconds: number;
  minAnonymitySet: number;
  maxWaitSeconds: number;
  timeoutSeconds: number;
  /** Progress lines (stderr). */
  progress: (line: string) => void;
}

export type RunningBench = BenchStack;

interface Created {
  routeId: string;
  amount: string;
  depositAddress: Address;
  group: 'shared' | 'distinct';
  requested: string;
}

const TERMINAL = new Set(['COMPLETED', 'FAILED']);
const DISTINCT_AMOUNTS = ['37.11', '52.3', '81.9', '140.25', '23.45', '64.8', '118.6', '199.99', '29.7', '71.35', '163.4', '45.05'];
const POLL_MS = 2000;
const PROGRESS_EVERY_MS = 15_000;
const REQUEST_TIMEOUT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Requested amounts: `shared` times the shared amount, then distinct ones (never in the shared amount's bucket). */
export function plannedAmounts(opts: Pick<BenchOptions, 'transfers' | 'shared' | 'sharedAmount'>): Array<{ amount: string; group: 'shared' | 'distinct' }> {
  const distinct = Array.from({ length: opts.transfers - opts.shared }, (_, i) => DISTINCT_AMOUNTS[i] ?? `${210 + 13 * i}.${(i * 37) % 100}`);
  return [
    ...Array.from({ length: opts.shared }, () => ({ amount: opts.sharedAmount, group: 'shared' as const })),
    ...distinct.map((amount) => ({ amount, group: 'distinct' as const })),
  ];
}

export async function startBench(opts: BenchOptions): Promise<RunningBench> {
  return startBenchStack({
    pollIntervalMs: 200,
    env: {
      PRIVACY_DELAY_MIN_SECONDS: '1',
      PRIVACY_DELAY_MAX_SECONDS: String(opts.delayMaxSeconds),
      PRIVACY_MIN_ANONYMITY_SET: String(opts.minAnonymitySet),
      PRIVACY_MAX_ANONYMITY_SET: String(Math.max(50, opts.minAnonymitySet)),
      PRIVACY_MAX_WAIT_SECONDS: String(opts.maxWaitSeconds),
    },
  });
}

/** What the attacker may know: RPC URLs, token and protocol addresses, the API URL. No keys. */
export function publicKnowledge(stack: LocalStack): PublicKnowledge {
  return {
    apiUrl: stack.apiUrl,
    chains: stack.manifest.chains.map((c) => ({
      role: c.role,
      chainId: c.chainId,
      rpcUrl: c.rpcUrl,
      tokens: c.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase(), decimals: t.decimals })),
    })),
    entrypoint: stack.manifest.privacyPools.entrypoint.toLowerCase(),
    pool: stack.manifest.privacyPools.pool.toLowerCase(),
  };
}

/** Creates every transfer (USDC → USDC, fresh recipients) through the public API. */
export async function createTransfers(stack: LocalStack, opts: BenchOptions): Promise<Created[]> {
  const created: Created[] = [];
  for (const { amount, group } of plannedAmounts(opts)) {
    const t = await api<{ routeId: string; amount: string; depositAddress: Address }>(stack, 'POST', '/api/private-route', {
      sourceChainId: chainOf(stack, 'source').chainId,
      destChainId: chainOf(stack, 'destination').chainId,
      amount,
      tokenSymbol: 'USDC',
      destTokenSymbol: 'USDC',
      userDestinationAddress: privateKeyToAccount(generatePrivateKey()).address,
    });
    created.push({ routeId: t.routeId, amount: t.amount, depositAddress: t.depositAddress, group, requested: amount });
  }
  return created;
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Funds the deposit addresses from the faucet, as senders would: random order, 0–gapMaxSeconds apart. */
export async function fundTransfers(stack: LocalStack, created: Created[], opts: Pick<BenchOptions, 'gapMaxSeconds' | 'progress'>): Promise<void> {
  const source = chainOf(stack, 'source');
  const usdc = source.tokens.find((t) => t.symbol === 'USDC')!.address;
  const wallet = createWalletClient({ account: privateKeyToAccount(stack.manifest.faucetPrivateKey), transport: http(source.rpcUrl) });
  const client = createPublicClient({ transport: http(source.rpcUrl), pollingInterval: 100 });
  for (const [i, t] of shuffled(created).entries()) {
    if (i > 0) await sleep(Math.random() * opts.gapMaxSeconds * 1000);
    const hash = await wallet.writeContract({
      chain: null,
      address: usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [t.depositAddress, BigInt(t.amount)],
    });
    await client.waitForTransactionReceipt({ hash, timeout: REQUEST_TIMEOUT_MS });
  }
  opts.progress(`funded ${created.length} deposit addresses`);
}

interface TransferView {
  status: string;
  error: string | null;
  privacy: { anonymitySet: number; waitedSeconds: number } | null;
}

/** Polls GET of the harness's own routes until all are terminal or the timeout passes; returns the last views. */
export async function awaitTransfers(stack: LocalStack, created: Created[], opts: BenchOptions): Promise<Map<string, TransferView>> {
  const deadline = Date.now() + opts.timeoutSeconds * 1000;
  const started = Date.now();
  let lastProgress = 0;
  let views = new Map<string, TransferView>();
  for (;;) {
    views = new Map(
      await Promise.all(created.map(async (t) => [t.routeId, await api<TransferView>(stack, 'GET', `/api/private-route/${t.routeId}`)] as const)),
    );
    const done = [...views.values()].filter((v) => TERMINAL.has(v.status)).length;
    if (Date.now() - lastProgress >= PROGRESS_EVERY_MS || done === created.length) {
      const counts = new Map<string, number>();
      for (const v of views.values()) counts.set(v.status, (counts.get(v.status) ?? 0) + 1);
      opts.progress(`${Math.round((Date.now() - started) / 1000)} s: ${[...counts].map(([s, n]) => `${s} ${n}`).join(', ')}`);
      lastProgress = Date.now();
    }
    if (done === created.length || Date.now() > deadline) return views;
    await sleep(POLL_MS);
  }
}

/** Ground truth per route: the ledger's pool and payout transactions, the GET privacy report. */
export async function groundTruth(stack: LocalStack, created: Created[], views: Map<string, TransferView>): Promise<RouteTruth[]> {
  const rows = await stack.service.db
    .select()
    .from(ledgerEntries)
    .where(
      inArray(
        ledgerEntries.routeId,
        created.map((t) => t.routeId),
      ),
    );
  const tx = (routeId: string, kind: string) => rows.find((r) => r.routeId === routeId && r.kind === kind)?.txHash?.toLowerCase() ?? null;
  return created.map((t) => {
    const view = views.get(t.routeId);
    return {
      routeId: t.routeId,
      group: t.group,
      amount: t.requested,
      status: view?.status ?? 'UNKNOWN',
      depositAddress: t.depositAddress.toLowerCase(),
      fillTx: tx(t.routeId, 'arrived_on_hub'),
      shieldTx: tx(t.routeId, 'shielded'),
      unshieldTx: tx(t.routeId, 'unshielded'),
      payoutTx: tx(t.routeId, 'paid'),
      anonymitySet: view?.privacy?.anonymitySet ?? null,
      waitedSeconds: view?.privacy?.waitedSeconds ?? null,
    };
  });
}
