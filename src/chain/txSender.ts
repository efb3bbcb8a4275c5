import { and, eq, gte, sql } from 'drizzle-orm';
import {
  createWalletClient,
  http,
  keccak256,
  type Address,
  type Hex,
  type LocalAccount,
  type TransactionReceipt,
} from 'viem';
import type { Database } from '../db/client.ts';
import { txIntents } from '../db/schema.ts';
import type { ChainClients } from './clients.ts';

export interface SendRequest {
  /** Idempotency key: one transaction per (routeId, step), ever. */
  routeId: string;
  step: string;
  chainId: number;
  account: LocalAccount;
  to: Address;
  data?: Hex;
  value?: bigint;
  /**
   * Gas above the estimate, in percent: for calls whose cost grows with state that other transactions may
   * change before this one is mined (a pool insert costs more when the tree gets deeper).
   */
  gasHeadroomPercent?: number;
}

export interface SentTransaction {
  txHash: Hex;
  receipt: TransactionReceipt;
}

/** The transaction was mined but reverted; retrying the same signed transaction cannot help. */
export class TransactionRevertedError extends Error {
  override name = 'TransactionRevertedError';
}

/** The sender's nonce was used by a different transaction: needs an operator, never an automatic re-sign. */
export class NonceConsumedError extends Error {
  override name = 'NonceConsumedError';
}

export interface TxSender {
  send(request: SendRequest): Promise<SentTransaction>;
  /** The recorded transaction of a step, if one was ever signed. */
  intent(routeId: string, step: string): Promise<{ txHash: Hex } | null>;
}

/**
 * Sends transactions with a write-ahead record so that a retried activity never pays twice:
 * 1. if (routeId, step) already has a signed transaction, wait for it (re-broadcasting it if the node lost it);
 * 2. otherwise, under a per-sender advisory lock, pick the nonce, sign and record the signed transaction in
 *    Postgres; only once that record is committed is it broadcast.
 * The same signed bytes are the only thing ever broadcast for a step, so at most one can be mined.
 */
export function createTxSender(db: Database, clients: ChainClients, opts: { receiptTimeoutMs?: number } = {}): TxSender {
  const receiptTimeoutMs = opts.receiptTimeoutMs ?? 120_000;

  async function broadcast(chainId: number, rawTx: Hex): Promise<void> {
    try {
      await clients.publicClient(chainId).sendRawTransaction({ serializedTransaction: rawTx });
    } catch (error) {
      // A node that already has it, or already mined it, answers with an error: the receipt check decides.
      const message = error instanceof Error ? error.message.toLowerCase() : '';
      if (!/already known|already imported|nonce too low|known transaction|replacement transaction/.test(message)) throw error;
    }
  }

  async function settle(chainId: number, from: Address, nonce: number, txHash: Hex, rawTx: Hex): Promise<SentTransaction> {
    const client = clients.publicClient(chainId);
    let receipt = await client.getTransactionReceipt({ hash: txHash }).catch(() => null);
    if (!receipt) {
      const mined = await client.getTransactionCount({ address: from, blockTag: 'latest' });
      if (mined > nonce) {
        // Our nonce is used. If not by our transaction (checked once more to avoid a race), stop.
        receipt = await client.getTransactionReceipt({ hash: txHash }).catch(() => null);
        if (!receipt) throw new NonceConsumedError(`nonce ${nonce} of ${from} on chain ${chainId} was used by another transaction than ${txHash}`);
      } else {
        await broadcast(chainId, rawTx);
        receipt = await client.waitForTransactionReceipt({ hash: txHash, timeout: receiptTimeoutMs, pollingInterval: 250 });
      }
    }
    if (receipt.status !== 'success') throw new TransactionRevertedError(`transaction ${txHash} on chain ${chainId} reverted`);
    return { txHash, receipt };
  }

  async function findIntent(routeId: string, step: string) {
    const rows = await db.select().from(txIntents).where(and(eq(txIntents.routeId, routeId), eq(txIntents.step, step)));
    return rows[0] ?? null;
  }

  return {
    async intent(routeId, step) {
      const row = await findIntent(routeId, step);
      return row ? { txHash: row.txHash as Hex } : null;
    },

    async send(request) {
      const existing = await findIntent(request.routeId, request.step);
      if (existing) {
        return settle(existing.chainId, existing.fromAddress as Address, existing.nonce, existing.txHash as Hex, existing.rawTx as Hex);
      }

      const { account, chainId } = request;
      const client = clients.publicClient(chainId);
      const wallet = createWalletClient({ account, chain: clients.chain(chainId), transport: http(client.transport.url) });

      const signed = await db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`${chainId}:${account.address.toLowerCase()}`}))`);
        const again = await tx.select().from(txIntents).where(and(eq(txIntents.routeId, request.routeId), eq(txIntents.step, request.step)));
        if (again[0]) return again[0];

        // Intents recorded but never broadcast (a crash between record and broadcast) hold the next nonces: push them first.
        const pendingNonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
        const unsent = await tx
          .select()
          .from(txIntents)
          .where(and(eq(txIntents.chainId, chainId), eq(txIntents.fromAddress, account.address), gte(txIntents.nonce, pendingNonce)));
        for (const row of unsent.sort((a, b) => a.nonce - b.nonce)) await broadcast(chainId, row.rawTx as Hex);
        const nonce = pendingNonce + unsent.length;

        const prepared = await wallet.prepareTransactionRequest({
          account,
          chain: clients.chain(chainId),
          to: request.to,
          data: request.data,
          value: request.value,
          nonce,
        });
        if (request.gasHeadroomPercent) prepared.gas = (prepared.gas * BigInt(100 + request.gasHeadroomPercent)) / 100n;
        const rawTx = await account.signTransaction(prepared as Parameters<LocalAccount['signTransaction']>[0]);
        const row = {
          routeId: request.routeId,
          step: request.step,
          chainId,
          fromAddress: account.address,
          nonce,
          txHash: keccak256(rawTx),
          rawTx,
        };
        await tx.insert(txIntents).values(row);
        return row;
      });
      // Broadcast only after the record is committed; a failed broadcast is retried from the record by `settle`.

      return settle(signed.chainId, signed.fromAddress as Address, signed.nonce, signed.txHash as Hex, signed.rawTx as Hex);
    },
  };
}
