import type { Address, PublicClient } from 'viem';
import type { Database } from '../../db/client.ts';
import type { ChainClients } from '../clients.ts';
import { type Intent, intentById } from '../intentStore.ts';
import type { SenderTimings } from './decide.ts';
import type { TxSenderOptions } from './types.ts';

/** What every action of the sender works with: the database, the chains, and the configured timings. */
export interface SenderContext {
  db: Database;
  clients: ChainClients;
  timings: SenderTimings;
  /** Per chain, the next account in turn among several (src/chain/sender/pickAccount.ts). */
  turns: Map<number, number>;
}

export function senderContext(db: Database, clients: ChainClients, opts: TxSenderOptions): SenderContext {
  return {
    db,
    clients,
    timings: {
      receiptTimeoutMs: opts.receiptTimeoutMs ?? 90_000,
      replaceAfterMs: opts.replaceAfterMs ?? 60_000,
      pollIntervalMs: opts.pollIntervalMs ?? 500,
    },
    turns: new Map(),
  };
}

export const publicClient = (ctx: SenderContext, chainId: number): PublicClient => ctx.clients.publicClient(chainId);

/** The sender's transaction count: 'latest' counts the mined ones, 'pending' also those a node holds. */
export const usedNonces = (ctx: SenderContext, sender: Pick<Intent, 'chainId' | 'fromAddress'>, blockTag: 'latest' | 'pending' = 'latest') =>
  publicClient(ctx, sender.chainId).getTransactionCount({ address: sender.fromAddress as Address, blockTag });

/** The intent as recorded now (the copy given, should the row be gone). */
export const reload = async (ctx: SenderContext, row: Intent): Promise<Intent> => (await intentById(ctx.db, row.id)) ?? row;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
