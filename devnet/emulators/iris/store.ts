import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Hex } from 'viem';
import { z } from 'zod';
import type { FaultOperation } from '../faults.ts';

/** One MessageSent of a source-chain transaction, as the emulated attestation service tracks it. */
export interface IrisMessage {
  sourceDomain: number;
  txHash: Hex;
  logIndex: number;
  /** Assigned by the service (in real CCTP v2 too: the emitted message has nonce 0). */
  nonce: Hex;
  /** The message as emitted on the source chain. */
  emitted: Hex;
  /** The final message and the attester's signature over its keccak256; null while the burn's maxFee is too low. */
  attested: { message: Hex; attestation: Hex } | null;
  /** Epoch ms from which the attestation is served; before that the message is pending_confirmations. */
  readyAt: number;
  operation: FaultOperation | null;
}

const hex = z
  .string()
  .regex(/^0x[0-9a-fA-F]*$/)
  .transform((h) => h as Hex);

const messageSchema = z.object({
  sourceDomain: z.number().int().nonnegative(),
  txHash: hex,
  logIndex: z.number().int().nonnegative(),
  nonce: hex,
  emitted: hex,
  attested: z.object({ message: hex, attestation: hex }).nullable(),
  readyAt: z.number(),
  operation: z.enum(['bridge-in', 'bridge-out']).nullable(),
});

const stateSchema = z.object({ version: z.literal(1), messages: z.array(messageSchema) });

export interface MessageStore {
  /** The messages of a transaction, once it has been seen. */
  byTransaction(sourceDomain: number, txHash: Hex): IrisMessage[] | undefined;
  byNonce(sourceDomain: number, nonce: Hex): IrisMessage | undefined;
  add(messages: IrisMessage[]): void;
  /** A re-attestation: the message's new final form and signature, kept. */
  update(message: IrisMessage, attested: NonNullable<IrisMessage['attested']>): void;
}

/**
 * Messages in memory and, with a statePath, in a JSON file rewritten atomically on every change: a
 * restarted emulator serves the very same message and attestation for a transaction it already answered.
 */
export function openMessageStore(statePath?: string): MessageStore {
  const messages: IrisMessage[] = statePath && existsSync(statePath) ? loadState(statePath) : [];
  const txKey = (domain: number, txHash: Hex) => `${domain}:${txHash.toLowerCase()}`;
  const byTx = new Map<string, IrisMessage[]>();
  const index = (m: IrisMessage) => {
    const key = txKey(m.sourceDomain, m.txHash);
    byTx.set(
      key,
      [...(byTx.get(key) ?? []), m].sort((a, b) => a.logIndex - b.logIndex),
    );
  };
  for (const m of messages) index(m);

  const persist = () => {
    if (!statePath) return;
    const tmp = `${statePath}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version: 1, messages }, null, 2)}\n`);
    renameSync(tmp, statePath);
  };

  return {
    byTransaction: (domain, txHash) => byTx.get(txKey(domain, txHash)),
    byNonce: (domain, nonce) => messages.find((m) => m.sourceDomain === domain && m.nonce.toLowerCase() === nonce.toLowerCase()),
    add(added) {
      for (const m of added) {
        messages.push(m);
        index(m);
      }
      persist();
    },
    update(message, attested) {
      message.attested = attested;
      persist();
    },
  };
}

function loadState(path: string): IrisMessage[] {
  const parsed = stateSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`Iris emulator state ${path} is invalid: ${parsed.error.message}`);
  return parsed.data.messages;
}
