import { z } from 'zod';
import { MAX_RELAY_SENDERS } from '../accounts/relaySenders.ts';

/** The signer process's request bodies (src/signer/signerApi.ts validates them, src/signer/remote.ts sends them). */
const accountIndex = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);
const fieldElement = z.string().regex(/^\d{1,78}$/, 'must be a decimal integer');
const noteIndex = z.string().regex(/^\d{1,20}$/, 'must be a decimal integer');

export const signerAccountSchema = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['deposit', 'hub', 'exit']), index: accountIndex }).strict(),
  z.object({ role: z.literal('gas') }).strict(),
  z
    .object({
      role: z.literal('poolRelayer'),
      index: z
        .number()
        .int()
        .min(0)
        .max(MAX_RELAY_SENDERS - 1)
        .optional(),
    })
    .strict(),
]);

export const signTransactionRequest = z
  .object({
    account: signerAccountSchema,
    // An unsigned serialized transaction: a few KiB of calldata at most (a pool withdrawal's proof is the largest).
    transaction: z.string().regex(/^0x([0-9a-fA-F]{2}){1,65536}$/, 'must be a 0x-prefixed serialized transaction'),
  })
  .strict();

export const noteSecretsRequest = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('deposit'), scope: fieldElement, index: noteIndex }).strict(),
  z.object({ kind: z.literal('withdrawal'), label: fieldElement, index: noteIndex }).strict(),
]);

export const SIGNER_PATHS = {
  publicKeys: '/v1/public-keys',
  signTransaction: '/v1/sign-transaction',
  noteSecrets: '/v1/note-secrets',
  health: '/healthz',
} as const;

/** The shared secret between the worker and the signer process. */
export const signerAuthToken = z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)');
