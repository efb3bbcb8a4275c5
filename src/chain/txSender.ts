import { and, asc, desc, eq, gte, max } from 'drizzle-orm';
import { offeredFees } from './fees.ts';
import {
  createWalletClient,
  http,
  keccak256,
  parseTransaction,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TransactionReceipt,
  type TransactionSerializable,
} from 'viem';
import type { Database } from '../db/client.ts';
import { txIntents } from '../db/schema.ts';
import { crashPoint } from '../temporal/crashPoints.ts';
import type { ChainClients } from './clients.ts';
import { type Db, describe, type Intent, intentById, lockSender, markMined, markVoided, nonceSiblings, sameSender, stepRows } from './intentStore.ts';
import { PrivateRouteError } from '../errors.ts';

export { type Intent, type QueuedIntent, senderQueues } from './intentStore.ts';

export interface SendRequest {
  /** Idempotency key: one live transaction per (routeId, step); a voided one frees the key. */
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
export class TransactionRevertedError extends PrivateRouteError {
  override name = 'TransactionRevertedError';
}

/** The sender's nonce was used by a transaction that is not ours: needs an operator, never an automatic re-sign. */
export class NonceConsumedError extends PrivateRouteError {
  override name = 'NonceConsumedError';
  constructor(
    message: string,
    readonly intentId: number,
  ) {
    super(message);
  }
}

/** The intent can never mine (another transaction of ours used its nonce) and was voided: the step's next try signs anew. */
export class IntentVoidedError extends PrivateRouteError {
  override name = 'IntentVoidedError';
}

/** The sender cannot pay for its transaction; once it is funded the same send goes on. */
export class SenderUnderfundedError extends PrivateRouteError {
  override name = 'SenderUnderfundedError';
}

/** Not mined yet (still waiting, or behind a stuck transaction of the same sender); the next try goes on waiting. */
export class TransactionPendingError extends PrivateRouteError {
  override name = 'TransactionPendingError';
}

/** An operator's void or cancel that does not apply (the transaction may still mine, or it mined). */
export class VoidRefusedError extends PrivateRouteError {
  override name = 'VoidRefusedError';
}

/**
 * A voided intent of a step mined after all while the step has signed anew at another nonce, which could pay a
 * second time: an operator cancels the new one (`routectl void <id> --cancel`); the step then takes the mined one.
 */
export class IntentConflictError extends PrivateRouteError {
  override name = 'IntentConflictError';
}

/**
 * The transaction's receipt, or null when the node has none (not mined, as far as that node knows). Any other
 * failure of the RPC is thrown, so the caller's retry looks again: an unreachable node never reads as "not mined".
 */
export async function receiptOrNull(client: PublicClient, hash: Hex): Promise<TransactionReceipt | null> {
  try {
    return await client.getTransactionReceipt({ hash });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  }
}

/** What the providers need: send a step's transaction once, and look it up. */
export interface TxSender {
  send(request: SendRequest): Promise<SentTransaction>;
  /**
   * The recorded transaction of a step, if one was ever signed (the attempt that mined, once known): its live
   * intent, or a voided one that mined after all. Null: never signed, or voided and never mined.
   */
  intent(routeId: string, step: string): Promise<{ txHash: Hex } | null>;
}

/** What operators and ending routes need: the queues, and voiding intents that can never mine. */
export interface IntentControl {
  /** One intent by id, live or voided. */
  get(id: number): Promise<Intent | null>;
  /** The sender's live intents the chain has not mined yet, in nonce order. */
  queue(chainId: number, from: Address): Promise<Intent[]>;
  /**
   * Voids an intent that can no longer mine: its nonce is used and none of its attempts mined, confirmed over
   * several looks (a lagging or failing node never makes a mined intent look unmined). Refuses otherwise.
   */
  void(id: number, reason: string): Promise<Intent>;
  /**
   * Replaces a pending intent with a 0-value self-send at its nonce (higher fees, recorded first) and waits for
   * it; the original is then voided. `replaced` is false when the original mined first.
   */
  cancel(id: number, account: LocalAccount): Promise<{ replaced: boolean; txHash: Hex }>;
  /**
   * Voids the route's intents that no node has (never broadcast, by several looks at the sender's pending nonce)
   * and that end their sender's queue. A voided intent is never broadcast again; should one reach the chain anyway
   * (a node the RPC did not ask had it), it is found and recorded as mined, never taken for absent.
   */
  voidUnsent(routeId: string, reason: string): Promise<Intent[]>;
}

export interface TxSenderOptions {
  /** How long one call waits for its transaction before it throws TransactionPendingError (the next call waits on). */
  receiptTimeoutMs?: number;
  /** A transaction at the head of its sender's queue that is still unmined after this long is replaced with higher fees. */
  replaceAfterMs?: number;
  pollIntervalMs?: number;
}

/** Attempts of one intent, the first included; after that it waits for an operator (`routectl senders`). */
export const MAX_ATTEMPTS = 10;

/** Looks at the chain before deciding "not mined" or "never reached a node": a load-balanced RPC may ask a node that lags. */
const LOOKS = 3;

/** Each replacement pays at least 12.5 % more on both fee fields (nodes require 10 %). */
const bump = (fee: bigint) => {
  const raised = (fee * 1125n + 999n) / 1000n;
  return raised > fee ? raised : fee + 1n;
};
const maxOf = (...values: bigint[]) => values.reduce((a, b) => (a > b ? a : b));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends transactions with a write-ahead record so that a retried activity never pays twice:
 * 1. if (routeId, step) has a live intent, settle it: wait until one of its attempts mines, re-broadcasting it if
 *    the node lost it, and replacing it at the same nonce with higher fees when the node rejects its fees or it
 *    waits too long at the head of its sender's queue (each replacement recorded before it is broadcast);
 * 2. otherwise, under a per-sender advisory lock, pick the nonce, sign and record the signed transaction in
 *    Postgres; only once that record is committed is it broadcast.
 * All attempts of an intent share its nonce and its effect, so at most one of them is mined. A nonce used by
 * another intent of ours voids the intent (the step may sign again); one used by a stranger stops the step.
 * Every broadcast re-reads the intent under its sender's lock: a voided intent is never broadcast. A voided intent
 * that mined after all counts as the step's transaction (recorded as mined), never as absent.
 */
export function createTxSender(db: Database, clients: ChainClients, opts: TxSenderOptions = {}): TxSender & IntentControl {
  const receiptTimeoutMs = opts.receiptTimeoutMs ?? 90_000;
  const replaceAfterMs = opts.replaceAfterMs ?? 60_000;
  const pollMs = opts.pollIntervalMs ?? 500;
  const client = (chainId: number) => clients.publicClient(chainId);
  const usedNonces = (row: Pick<Intent, 'chainId' | 'fromAddress'>, blockTag: 'latest' | 'pending' = 'latest') =>
    client(row.chainId).getTransactionCount({ address: row.fromAddress as Address, blockTag });

  const get = (id: number) => intentById(db, id);
  const reload = async (row: Intent): Promise<Intent> => (await get(row.id)) ?? row;

  /**
   * Broadcasts the intent's latest attempt, under its sender's lock and only while its record says pending: a
   * voided intent is never broadcast (a void takes the same lock, so it never races a broadcast). Returns the row
   * as recorded, and 'underpriced' when the node wants higher fees.
   */
  async function broadcast(row: Intent): Promise<{ row: Intent; outcome: 'sent' | 'underpriced' | 'voided' }> {
    return db.transaction(async (tx) => {
      await lockSender(tx, row.chainId, row.fromAddress);
      const current = await intentById(tx, row.id);
      if (!current || current.status === 'voided') return { row: current ?? row, outcome: 'voided' as const };
      if (current.status === 'mined') return { row: current, outcome: 'sent' as const };
      crashPoint('tx:signed'); // drill: the attempt is recorded (written ahead), not yet broadcast
      try {
        await client(current.chainId).sendRawTransaction({ serializedTransaction: current.rawTx as Hex });
        crashPoint('tx:broadcast'); // drill: broadcast, its outcome not yet recorded
        return { row: current, outcome: 'sent' as const };
      } catch (error) {
        // A node that already has it, or already used the nonce, answers with an error: the chain decides later.
        const message = error instanceof Error ? error.message.toLowerCase() : '';
        if (/already known|already imported|known transaction|nonce too low|replacement transaction underpriced/.test(message))
          return { row: current, outcome: 'sent' as const };
        if (/base fee|fee cap|underpriced|fee too low|gas price too low/.test(message)) return { row: current, outcome: 'underpriced' as const };
        if (/insufficient funds/.test(message)) {
          throw new SenderUnderfundedError(
            `${current.fromAddress} on chain ${current.chainId} cannot pay for ${describe(current)}: insufficient funds. Fund it; the send goes on by itself`,
          );
        }
        throw error;
      }
    });
  }

  /** The intent's latest transaction with fees ≥ 12.5 % higher on both fields, and at least what the chain asks now. */
  async function bumped(row: Intent, change: Partial<TransactionSerializable> = {}): Promise<TransactionSerializable> {
    const {
      r: _r,
      s: _s,
      v: _v,
      yParity: _y,
      ...tx
    } = parseTransaction(row.rawTx as Hex) as TransactionSerializable & { r?: Hex; s?: Hex; v?: bigint; yParity?: number };
    if (tx.type === 'eip1559') {
      const now = await client(row.chainId).estimateFeesPerGas({ chain: clients.chain(row.chainId), type: 'eip1559' });
      const maxPriorityFeePerGas = maxOf(bump(tx.maxPriorityFeePerGas ?? 0n), now.maxPriorityFeePerGas);
      const maxFeePerGas = maxOf(bump(tx.maxFeePerGas ?? 0n), now.maxFeePerGas, maxPriorityFeePerGas);
      return { ...tx, ...change, maxFeePerGas, maxPriorityFeePerGas } as TransactionSerializable;
    }
    const now = await client(row.chainId).estimateFeesPerGas({ chain: clients.chain(row.chainId), type: 'legacy' });
    return { ...tx, ...change, gasPrice: maxOf(bump(tx.gasPrice ?? 0n), now.gasPrice) } as TransactionSerializable;
  }

  /**
   * Records a new attempt of the intent at the same nonce with higher fees; the caller broadcasts it. Returns the
   * intent unchanged when another process replaced it meanwhile, when it is settled, or when a cancel supersedes it.
   */
  async function replace(row: Intent, account: LocalAccount): Promise<Intent> {
    return db.transaction(async (tx) => {
      await lockSender(tx, row.chainId, row.fromAddress);
      const [current] = await tx.select().from(txIntents).where(eq(txIntents.id, row.id));
      if (current?.status !== 'pending' || current.attempt !== row.attempt) return current ?? row;
      const cancels = await tx
        .select({ id: txIntents.id })
        .from(txIntents)
        .where(
          and(
            sameSender(row.chainId, row.fromAddress),
            eq(txIntents.nonce, row.nonce),
            eq(txIntents.status, 'pending'),
            eq(txIntents.step, `cancel:${row.id}`),
          ),
        );
      if (cancels.length > 0) return current;
      if (current.attempt >= MAX_ATTEMPTS) {
        throw new TransactionPendingError(`${describe(current)} is not mined after ${current.attempt} attempts with rising fees; see routectl senders`);
      }
      const rawTx = await account.signTransaction(await bumped(current));
      const [next] = await tx
        .update(txIntents)
        .set({
          txHash: keccak256(rawTx),
          rawTx,
          attempt: current.attempt + 1,
          earlierTxHashes: [...current.earlierTxHashes, current.txHash],
          lastAttemptAt: new Date(),
        })
        .where(eq(txIntents.id, current.id))
        .returning();
      return next ?? current;
    });
  }

  /**
   * Broadcasts the intent, replacing it while the node rejects its fees (a base fee that rose since it was signed).
   * Returns the row as recorded: a voided one was not broadcast.
   */
  async function push(row: Intent, account: LocalAccount): Promise<Intent> {
    let current = row;
    for (let tries = 0; ; tries++) {
      const sent = await broadcast(current);
      current = sent.row;
      if (sent.outcome !== 'underpriced') return current;
      if (tries >= 3) throw new TransactionPendingError(`the node keeps rejecting the fees of ${describe(current)}; the next try raises them again`);
      const next = await replace(current, account);
      if (next.attempt === current.attempt) return next;
      current = next;
    }
  }

  /** Intents of this sender that no node has (a crash before broadcast, or rejected): pushed in nonce order. */
  async function pushQueue(chainId: number, account: LocalAccount): Promise<void> {
    const pending = await usedNonces({ chainId, fromAddress: account.address }, 'pending');
    const unsent = await db
      .select()
      .from(txIntents)
      .where(and(sameSender(chainId, account.address), eq(txIntents.status, 'pending'), gte(txIntents.nonce, pending)))
      .orderBy(asc(txIntents.nonce), asc(txIntents.id));
    for (const row of unsent) await push(row, account);
  }

  /** The head of the sender's queue (maybe this intent) has waited too long: replace it with higher fees. */
  async function unstick(row: Intent, head: number, account: LocalAccount): Promise<Intent> {
    const [blocking] = await db
      .select()
      .from(txIntents)
      .where(and(sameSender(row.chainId, row.fromAddress), eq(txIntents.nonce, head), eq(txIntents.status, 'pending')))
      .orderBy(desc(txIntents.id))
      .limit(1);
    if (blocking && Date.now() - blocking.lastAttemptAt.getTime() >= replaceAfterMs) await push(await replace(blocking, account), account);
    else if (blocking) await push(blocking, account);
    return reload(row);
  }

  /** The attempt of the intent that a node has a receipt for. RPC failures are thrown, never read as "not mined". */
  async function minedAttempt(row: Intent): Promise<TransactionReceipt | null> {
    for (const hash of [row.txHash, ...row.earlierTxHashes] as Hex[]) {
      const receipt = await receiptOrNull(client(row.chainId), hash);
      if (receipt) return receipt;
    }
    return null;
  }

  /** Records an attempt as mined; the status follows the row as it is now (see markMined), never this copy of it. */
  async function recordMined(row: Intent, hash: string, handle: Db = db): Promise<Intent> {
    return (await markMined(handle, row.id, hash)) ?? row;
  }

  async function finish(row: Intent, receipt: TransactionReceipt): Promise<SentTransaction> {
    await recordMined(row, receipt.transactionHash);
    if (receipt.status !== 'success') throw new TransactionRevertedError(`${describe(row)} reverted on chain ${row.chainId}`);
    return { txHash: receipt.transactionHash, receipt };
  }

  /** Another intent of ours at the same nonce whose transaction mined. */
  async function minedSibling(row: Intent): Promise<Intent | null> {
    for (const sibling of await nonceSiblings(db, row)) {
      const receipt = await minedAttempt(sibling);
      if (receipt) return recordMined(sibling, receipt.transactionHash);
    }
    return null;
  }

  /** The chain used the intent's nonce: by one of its attempts, by another intent of ours (this one is voided), or by a stranger. */
  async function resolveUsedNonce(initial: Intent): Promise<SentTransaction> {
    let row = initial;
    // Looked at a few times: a load-balanced RPC may answer the nonce from a node ahead of the one asked for receipts.
    for (let look = 0; look < LOOKS; look++) {
      if (look > 0) await sleep(pollMs);
      // Another process (a later send of the same sender) may have replaced it meanwhile.
      row = await reload(row);
      const receipt = await minedAttempt(row);
      if (receipt) return finish(row, receipt);
      const sibling = await minedSibling(row);
      if (sibling) {
        await markVoided(db, row, `its nonce was used by intent #${sibling.id} (${sibling.step})`);
        throw new IntentVoidedError(
          `${describe(row)} can never mine: intent #${sibling.id} (${sibling.step}) used its nonce. It is voided; the step's next try signs anew`,
        );
      }
    }
    if (row.status === 'voided') {
      throw new IntentVoidedError(`${describe(row)} was voided and never mined: a transaction that is not ours used its nonce. The step's next try signs anew`);
    }
    throw new NonceConsumedError(
      `${describe(row)}: its nonce was used by a transaction that is not ours, so it will never mine. Find out who holds the key; then \`routectl void ${row.id}\` lets the step sign anew`,
      row.id,
    );
  }

  /** Waits until the intent's nonce is used, keeping the sender's queue moving meanwhile. */
  async function settle(initial: Intent, account: LocalAccount): Promise<SentTransaction> {
    if (initial.fromAddress.toLowerCase() !== account.address.toLowerCase())
      throw new Error(`${describe(initial)} was signed by another account than ${account.address}`);
    let row = initial;
    const deadline = Date.now() + receiptTimeoutMs;
    let pushed = false;
    let lookedAtHead = Date.now();
    for (;;) {
      const used = await usedNonces(row);
      if (used > row.nonce) return resolveUsedNonce(row);
      // Voided while unmined (its route ended, or an operator voided it): never pushed out again.
      if (row.status === 'voided') {
        throw new IntentVoidedError(
          `${describe(row)} was voided (${row.voidReason ?? 'no reason recorded'}); it is not broadcast again. The step's next try signs anew`,
        );
      }
      if (!pushed) {
        row = await push(row, account);
        pushed = true;
      } else if (Date.now() - lookedAtHead >= Math.min(replaceAfterMs, 10_000)) {
        lookedAtHead = Date.now();
        row = await unstick(row, used, account);
      }
      if (Date.now() >= deadline) {
        const behind = used < row.nonce ? ` behind ${row.nonce - used} earlier transaction(s) of ${row.fromAddress}` : '';
        throw new TransactionPendingError(
          `${describe(row)} is not mined after ${Math.round(receiptTimeoutMs / 1000)} s (attempt ${row.attempt})${behind}; the next try waits on`,
        );
      }
      await sleep(pollMs);
      row = await reload(row);
    }
  }

  /**
   * The step's transaction: its live intent, else a voided one that mined after all (recorded as mined: what the
   * chain did wins over the record). Null when the step never signed, or signed only voided intents that never mined.
   */
  async function stepIntent(routeId: string, step: string, handle: Db = db): Promise<Intent | null> {
    const rows = await stepRows(handle, routeId, step);
    let live = rows.find((row) => row.status !== 'voided') ?? null;
    if (live?.status === 'mined') return live;
    for (const voided of rows.filter((row) => row.status === 'voided')) {
      const hash = await minedAfterVoid(voided, handle);
      if (!hash) continue;
      if (live) {
        // The step signed anew after the void. At the same nonce the new intent can never mine: it is voided and the
        // mined one is the step's. At another nonce it could pay a second time: it must not go out unseen.
        if (live.chainId !== voided.chainId || live.fromAddress !== voided.fromAddress || live.nonce !== voided.nonce) {
          await recordMined(voided, hash, handle);
          throw new IntentConflictError(
            `${describe(voided)} was voided but mined after all, and ${describe(live)} of the same step is pending at another nonce: it could pay again. Cancel it with \`routectl void ${live.id} --cancel\`; the step then takes the mined one`,
          );
        }
        await markVoided(handle, live, `its nonce was used by intent #${voided.id} (voided earlier, mined after all)`);
        live = null;
      }
      return recordMined(voided, hash, handle);
    }
    return live;
  }

  /** The mined attempt of a voided intent: as recorded, or found on chain (unless a recorded sibling mined at its nonce). */
  async function minedAfterVoid(row: Intent, handle: Db): Promise<string | null> {
    if (row.minedTxHash) return row.minedTxHash;
    if ((await nonceSiblings(handle, row)).some((sibling) => sibling.minedTxHash !== null)) return null;
    return (await minedAttempt(row))?.transactionHash ?? null;
  }

  /** Signs and records a new intent at the sender's next nonce: after what the node has and after our queued intents. */
  async function signNew(request: SendRequest, tx: Db): Promise<Intent> {
    const { account, chainId } = request;
    const pending = await usedNonces({ chainId, fromAddress: account.address }, 'pending');
    const [queued] = await tx
      .select({ last: max(txIntents.nonce) })
      .from(txIntents)
      .where(and(sameSender(chainId, account.address), eq(txIntents.status, 'pending'), gte(txIntents.nonce, pending)));
    const nonce = queued?.last == null ? pending : Math.max(pending, queued.last + 1);
    const wallet = createWalletClient({ account, chain: clients.chain(chainId), transport: http(client(chainId).transport.url) });
    const fees = await offeredFees(client(chainId), clients.chain(chainId));
    const prepared = await wallet.prepareTransactionRequest({
      account,
      chain: clients.chain(chainId),
      to: request.to,
      data: request.data,
      value: request.value,
      nonce,
      ...(fees.type === 'eip1559' ? { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas } : { gasPrice: fees.gasPrice }),
    });
    // viem asks the node to fill the transaction (eth_fillTransaction) and lets the node's fees win over the ones given:
    // ours are set again, so the transaction offers what its top-up and its quote were sized by (src/chain/fees.ts).
    if (fees.type === 'eip1559')
      Object.assign(prepared, { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, gasPrice: undefined });
    else Object.assign(prepared, { gasPrice: fees.gasPrice, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined });
    if (request.gasHeadroomPercent) prepared.gas = (prepared.gas * BigInt(100 + request.gasHeadroomPercent)) / 100n;
    const rawTx = await account.signTransaction(prepared as Parameters<LocalAccount['signTransaction']>[0]);
    const [row] = await tx
      .insert(txIntents)
      .values({ routeId: request.routeId, step: request.step, chainId, fromAddress: account.address, nonce, txHash: keccak256(rawTx), rawTx })
      .returning();
    if (!row) throw new Error(`the intent of ${request.routeId}/${request.step} was not recorded`);
    return row;
  }

  return {
    async intent(routeId, step) {
      const row = await stepIntent(routeId, step);
      if (!row) return null;
      if (row.minedTxHash) return { txHash: row.minedTxHash as Hex };
      // After a replacement the earlier attempt may be the one that mined.
      const mined = row.earlierTxHashes.length > 0 ? await minedAttempt(row) : null;
      return { txHash: (mined?.transactionHash ?? row.txHash) as Hex };
    },

    get,

    async queue(chainId, from) {
      const used = await usedNonces({ chainId, fromAddress: from });
      return db
        .select()
        .from(txIntents)
        .where(and(sameSender(chainId, from), eq(txIntents.status, 'pending'), gte(txIntents.nonce, used)))
        .orderBy(asc(txIntents.nonce), asc(txIntents.id));
    },

    async send(request) {
      const existing = await stepIntent(request.routeId, request.step);
      if (existing) return settle(existing, request.account);

      // Crash leftovers of this sender first: a new transaction could not mine before them anyway.
      await pushQueue(request.chainId, request.account);
      const signed = await db.transaction(async (tx) => {
        await lockSender(tx, request.chainId, request.account.address);
        const again = await stepIntent(request.routeId, request.step, tx);
        if (again) return again;
        return signNew(request, tx);
      });
      // Broadcast only after the record is committed; a failed broadcast is retried from the record by `settle`.
      return settle(signed, request.account);
    },

    async void(id, reason) {
      const row = await get(id);
      if (!row) throw new VoidRefusedError(`there is no intent #${id}`);
      if (row.status === 'voided') return row;
      if ((await usedNonces(row)) <= row.nonce) {
        throw new VoidRefusedError(
          `${describe(row)} may still mine: nonce ${row.nonce} of ${row.fromAddress} on chain ${row.chainId} is unused. Replace it first with \`routectl void ${id} --cancel\``,
        );
      }
      // Its nonce is used. Which transaction used it is confirmed over several looks before anything is voided: a node
      // that lags must not make a mined intent look unmined (the step would sign, and pay, again).
      let current = row;
      for (let look = 0; look < LOOKS; look++) {
        if (look > 0) await sleep(pollMs);
        current = await reload(current); // another process may have replaced it, or recorded it mined
        const receipt = await minedAttempt(current);
        if (receipt) {
          await recordMined(current, receipt.transactionHash);
          throw new VoidRefusedError(
            `${describe(row)} mined (${receipt.status === 'success' ? 'successfully' : 'reverted'}, tx ${receipt.transactionHash}); there is nothing to void`,
          );
        }
        if (current.status !== 'pending') break;
      }
      if (current.status === 'mined') throw new VoidRefusedError(`${describe(row)} mined (tx ${current.minedTxHash}); there is nothing to void`);
      const sibling = await minedSibling(current);
      return markVoided(db, current, sibling ? `${reason} (its nonce was used by intent #${sibling.id} (${sibling.step}))` : reason);
    },

    async cancel(id, account) {
      const original = await get(id);
      if (original?.status !== 'pending') throw new VoidRefusedError(`intent #${id} is ${original?.status ?? 'unknown'}; there is nothing to cancel`);
      const step = `cancel:${id}`;
      let replacement = await stepIntent(original.routeId, step);
      if (!replacement) {
        if ((await usedNonces(original)) > original.nonce)
          throw new VoidRefusedError(`the nonce of ${describe(original)} is already used; void it with \`routectl void ${id}\``);
        // Estimated, not 21,000: chains that charge L1 data in L2 gas want more for a plain transfer.
        const gas = await client(original.chainId).estimateGas({ account: account.address, to: account.address, value: 0n });
        replacement = await db.transaction(async (tx) => {
          await lockSender(tx, original.chainId, original.fromAddress);
          const again = await stepIntent(original.routeId, step, tx);
          if (again) return again;
          // A 0-value self-send at the same nonce, with fees above every attempt of the original.
          const rawTx = await account.signTransaction(await bumped(await reload(original), { to: account.address, value: 0n, data: undefined, gas }));
          const [row] = await tx
            .insert(txIntents)
            .values({
              routeId: original.routeId,
              step,
              chainId: original.chainId,
              fromAddress: original.fromAddress,
              nonce: original.nonce,
              txHash: keccak256(rawTx),
              rawTx,
            })
            .returning();
          if (!row) throw new Error(`the cancel of intent #${id} was not recorded`);
          return row;
        });
      }
      try {
        const sent = await settle(replacement, account);
        await markVoided(db, original, `replaced by intent #${replacement.id} (a 0-value self-send at its nonce)`);
        return { replaced: true, txHash: sent.txHash };
      } catch (error) {
        if (!(error instanceof IntentVoidedError)) throw error;
        const mined = await get(id);
        return { replaced: false, txHash: (mined?.minedTxHash ?? original.txHash) as Hex };
      }
    },

    async voidUnsent(routeId, reason) {
      const mine = await db
        .select()
        .from(txIntents)
        .where(and(eq(txIntents.routeId, routeId), eq(txIntents.status, 'pending')));
      const senders = new Map(mine.map((row) => [`${row.chainId}:${row.fromAddress}`, row]));
      const voided: Intent[] = [];
      for (const sender of senders.values()) {
        await db.transaction(async (tx) => {
          await lockSender(tx, sender.chainId, sender.fromAddress);
          // The highest of several looks: a node that has not seen a broadcast yet must not make it look unsent.
          let pending = 0;
          for (let look = 0; look < LOOKS; look++) {
            if (look > 0) await sleep(pollMs);
            pending = Math.max(pending, await usedNonces(sender, 'pending'));
          }
          const tail = await tx
            .select()
            .from(txIntents)
            .where(and(sameSender(sender.chainId, sender.fromAddress), eq(txIntents.status, 'pending'), gte(txIntents.nonce, pending)))
            .orderBy(desc(txIntents.nonce), desc(txIntents.id));
          // Only from the end of the queue: voiding one below another sender's intent would leave a gap that blocks it.
          for (const row of tail) {
            if (row.routeId !== routeId) break;
            voided.push(await markVoided(tx, row, reason));
          }
        });
      }
      return voided;
    },
  };
}
