import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Bearer secrets (the signer's and the codec endpoint's tokens, statusTokens, partner API keys) are compared and
 * stored as SHA-256 digests: equal lengths, compared in constant time, so neither a token's length nor its prefix
 * leaks, and a stored digest opens nothing.
 */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Whether `presented` is the secret whose digest is `expected`, in constant time. */
export function matchesSecretDigest(presented: string, expected: Buffer): boolean {
  const actual = secretDigest(presented);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  return /^Bearer (.+)$/.exec(header ?? '')?.[1] ?? null;
}
