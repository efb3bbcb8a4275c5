import { isAddress, zeroAddress } from 'viem';
import { z } from 'zod';

const chainId = (field: string) =>
  z
    .number({ error: `${field} must be a number` })
    // First, so that 2^53 and beyond are called too large rather than not an integer.
    .max(Number.MAX_SAFE_INTEGER, `${field} is too large (at most ${Number.MAX_SAFE_INTEGER}); see GET /api/bridge/chains for the supported chains`)
    .int(`${field} must be an integer`)
    .positive(`${field} must be positive`);

const symbol = (field: string) =>
  z.string({ error: `${field} must be a string` }).trim().min(1, `${field} must not be empty`).max(32, `${field} is too long`);

export const transferRequestSchema = z.object({
  sourceChainId: chainId('sourceChainId'),
  destChainId: chainId('destChainId'),
  amount: z
    .string({ error: 'amount must be a string with a decimal number of source tokens, e.g. "12.5"' })
    .max(80, 'amount is too long'),
  tokenSymbol: symbol('tokenSymbol').optional(),
  destTokenSymbol: symbol('destTokenSymbol').optional(),
});

const evmAddress = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .refine((value) => isAddress(value, { strict: true }), `${field} must be a 0x-prefixed 20-byte hex address (with a valid checksum when mixed-case)`)
    .refine((value) => value.toLowerCase() !== zeroAddress, `${field} must not be the zero address`)
    .transform((value) => value as `0x${string}`);

export const createTransferSchema = transferRequestSchema.extend({
  userDestinationAddress: evmAddress('userDestinationAddress'),
  /** Addition to the spec: where undeliverable deposits go back to, on the source chain. */
  refundAddress: evmAddress('refundAddress').optional(),
  /** Addition to the spec: wait for at least this anonymity set in the pool (bounded by PRIVACY_MAX_ANONYMITY_SET). */
  minAnonymitySet: z
    .number({ error: 'minAnonymitySet must be a number' })
    .int('minAnonymitySet must be an integer')
    .positive('minAnonymitySet must be positive')
    .optional(),
});

export const tokensQuerySchema = z.object({
  chainId: z
    .string({ error: 'chainId query parameter is required' })
    .regex(/^[1-9]\d{0,15}$/, 'chainId must be a positive integer')
    .transform(Number)
    .refine((value) => Number.isSafeInteger(value), 'chainId is too large (at most 9007199254740991)'),
  search: z.string().max(64, 'search is too long').optional(),
});

/** "field: problem" for the first issue, the way every 400 names what is wrong. */
export function describeZodError(error: z.ZodError, input: Record<string, unknown>): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request';
  const path = issue.path.join('.');
  const field = issue.path[0];
  if (issue.code === 'invalid_type' && typeof field === 'string' && input[field] === undefined) return `${path} is required`;
  return issue.message.startsWith(path) || !path ? issue.message : `${path}: ${issue.message}`;
}
