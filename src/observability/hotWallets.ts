/**
 * The hot wallets' gauges on the worker's /metrics: the gas account (top-ups before the pool, CCTP mints on the hub)
 * and the pool's relayer (withdrawals, top-ups after the pool, mints on the destination) on each chain where they pay,
 * with what they spend a day at the current rate and the days of runway left (docs/operations.md, "Hot wallets").
 *
 * The rate is the routes created in the last 24 hours that received their deposit, each costing what the quotes charge for it (src/quote/gasCost.ts: the
 * payer's gas budgets at the chain's fee per gas now). A wallet that paid nothing in a day has an infinite runway.
 */
import { and, count, eq, gte, inArray, isNotNull, isNull, min, sql } from 'drizzle-orm';
import { type Address, formatEther } from 'viem';
import type { ChainClients } from '../chain/clients.ts';
import { feeCap, offeredFees } from '../chain/fees.ts';
import type { Database } from '../db/client.ts';
import { transfers, txIntents } from '../db/schema.ts';
import type { Logger } from '../logger.ts';
import { createTtlCache } from '../providers/ttlCache.ts';
import { type BridgeMode, type ChainRole, type HotWallet, routeGas } from '../quote/gasCost.ts';
import { Gauge, type Registry } from 'prom-client';

export interface HotWalletSettings {
  mode: BridgeMode;
  hubChainId: number;
  /** Every chain the service serves (CHAIN_RPC_URLS). */
  chainIds: number[];
  addresses: Record<HotWallet, Address>;
  /**
   * The relayer's other sending accounts (withdrawals and mints take turns among them and the relayer): each has a
   * balance and a queue of its own, and is counted as spending an even share of the relayer's sends.
   */
  relaySenders?: Address[];
}

/** A gauge's wallet label: a hot wallet's name, or `pool_relay_sender_<i>` for the relayer's i-th other sending account. */
type WalletLabel = HotWallet | `pool_relay_sender_${number}`;

/** Gas units a wallet pays per day on each chain, from the routes funded in the last 24 hours. */
export function dailyGasUnits(
  mode: BridgeMode,
  hubChainId: number,
  routes: Array<{ sourceChainId: number; destChainId: number; routes: number }>,
): Map<string, bigint> {
  const units = new Map<string, bigint>();
  const add = (wallet: HotWallet, chainId: number, gas: bigint) => {
    if (gas > 0n) units.set(`${wallet}|${chainId}`, (units.get(`${wallet}|${chainId}`) ?? 0n) + gas);
  };
  for (const { sourceChainId, destChainId, routes: n } of routes) {
    const chainOf: Record<ChainRole, number> = { source: sourceChainId, hub: hubChainId, destination: destChainId };
    for (const wallet of ['gas', 'pool_relayer'] as const) {
      const gas = routeGas(mode, { sourceIsHub: sourceChainId === hubChainId, destinationIsHub: destChainId === hubChainId }, wallet);
      for (const role of ['source', 'hub', 'destination'] as const) add(wallet, chainOf[role], gas[role] * BigInt(n));
    }
  }
  return units;
}

/** Days a balance lasts at a spend per day (both in wei); Infinity when nothing is spent. */
export function runwayDays(balance: bigint, spendPerDay: bigint): number {
  if (spendPerDay <= 0n) return Number.POSITIVE_INFINITY;
  // Hundredths of a day, exact, then one conversion.
  return Number((balance * 100n) / spendPerDay) / 100;
}

const SNAPSHOT_TTL_MS = 15_000;

export function registerHotWalletGauges(registry: Registry, deps: { db: Database; chains: ChainClients; settings: HotWalletSettings; logger?: Logger }): void {
  const { settings } = deps;
  interface Row {
    wallet: WalletLabel;
    chainId: number;
    balance: bigint;
    spendPerDay: bigint;
  }
  // One read of the chains per scrape window, shared by the three gauges; a failed read is not kept.
  const cache = createTtlCache<Row[]>({ ttlMs: SNAPSHOT_TTL_MS });

  const read = async (): Promise<Row[]> => {
    const since = new Date(Date.now() - 24 * 3600 * 1000);
    const funded = await deps.db
      .select({ sourceChainId: transfers.sourceChainId, destChainId: transfers.destChainId, routes: count() })
      .from(transfers)
      .where(and(isNotNull(transfers.depositTxHash), gte(transfers.createdAt, since)))
      .groupBy(transfers.sourceChainId, transfers.destChainId);
    const daily = dailyGasUnits(settings.mode, settings.hubChainId, funded);
    const senders = settings.relaySenders ?? [];
    const pairs: Array<{ wallet: WalletLabel; address: Address; chainId: number; dailyUnits: bigint }> = [];
    for (const chainId of settings.chainIds) {
      const units = (wallet: HotWallet) => daily.get(`${wallet}|${chainId}`) ?? 0n;
      pairs.push({ wallet: 'gas', address: settings.addresses.gas, chainId, dailyUnits: units('gas') });
      // The pool's relayer pays on the hub, and in burn-and-mint mode on every destination (its mints).
      if (chainId === settings.hubChainId || settings.mode === 'cctp') {
        pairs.push({ wallet: 'pool_relayer', address: settings.addresses.pool_relayer, chainId, dailyUnits: units('pool_relayer') });
        const share = units('pool_relayer') / BigInt(senders.length + 1);
        for (const [i, address] of senders.entries()) pairs.push({ wallet: `pool_relay_sender_${i + 1}`, address, chainId, dailyUnits: share });
      }
    }
    // A chain whose RPC fails drops its own rows, not every wallet's.
    const rows = await Promise.allSettled(
      pairs.map(async ({ wallet, address, chainId, dailyUnits }) => {
        const client = deps.chains.publicClient(chainId);
        const [balance, fees] = await Promise.all([client.getBalance({ address }), offeredFees(client, deps.chains.chain(chainId))]);
        return { wallet, chainId, balance, spendPerDay: dailyUnits * feeCap(fees) };
      }),
    );
    for (const row of rows) if (row.status === 'rejected') deps.logger?.warn('metrics: reading a hot wallet failed', { error: String(row.reason) });
    return rows.flatMap((row) => (row.status === 'fulfilled' ? [row.value] : []));
  };
  const snapshot = () => cache.get('hot wallets', read);
  const gauge = (name: string, help: string, figure: (row: Row) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['wallet', 'chain_id'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const row of await snapshot()) this.set({ wallet: row.wallet, chain_id: String(row.chainId) }, figure(row));
        } catch (error) {
          deps.logger?.warn('metrics: reading the hot wallets failed', { error: String(error) });
        }
      },
    });
  gauge('private_route_hot_wallet_balance', "A hot wallet's native balance (whole units of the chain's native currency)", (row) =>
    Number(formatEther(row.balance)),
  );
  gauge(
    'private_route_hot_wallet_spend_per_day',
    "What the wallet spends a day at the last 24 hours' funded routes and the chain's fee per gas now (native units)",
    (row) => Number(formatEther(row.spendPerDay)),
  );
  gauge('private_route_hot_wallet_runway_days', 'Days the balance lasts at that rate (+Inf when the wallet spent nothing)', (row) =>
    runwayDays(row.balance, row.spendPerDay),
  );

  // The queue of each hot wallet: its oldest send recorded and not yet seen mined (or voided). One stuck transaction
  // holds every later one of its sender back (nonces are in order): the relayer's stalls every withdrawal.
  new Gauge({
    name: 'private_route_hot_wallet_oldest_pending_seconds',
    help: "Age of the wallet's oldest recorded send not yet seen mined (0: none), by wallet and chain_id",
    labelNames: ['wallet', 'chain_id'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const labelled: [WalletLabel, Address][] = [
          ...(Object.entries(settings.addresses) as [HotWallet, Address][]),
          ...(settings.relaySenders ?? []).map((address, i): [WalletLabel, Address] => [`pool_relay_sender_${i + 1}`, address]),
        ];
        const byAddress = new Map(labelled.map(([wallet, address]) => [address.toLowerCase(), wallet]));
        const rows = await deps.db
          .select({ chainId: txIntents.chainId, from: txIntents.fromAddress, oldest: min(txIntents.createdAt) })
          .from(txIntents)
          .where(and(eq(txIntents.status, 'pending'), isNull(txIntents.minedTxHash), inArray(sql`lower(${txIntents.fromAddress})`, [...byAddress.keys()])))
          .groupBy(txIntents.chainId, txIntents.fromAddress);
        for (const chainId of settings.chainIds) for (const [wallet] of labelled) this.set({ wallet, chain_id: String(chainId) }, 0);
        for (const row of rows) {
          const wallet = byAddress.get(row.from.toLowerCase());
          if (wallet && row.oldest) this.set({ wallet, chain_id: String(row.chainId) }, Math.max(0, (Date.now() - new Date(row.oldest).getTime()) / 1000));
        }
      } catch (error) {
        deps.logger?.warn('metrics: reading the hot wallets’ queues failed', { error: String(error) });
      }
    },
  });
}
