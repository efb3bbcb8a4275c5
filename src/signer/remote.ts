import type { Hex } from 'viem';
import { SIGNER_PATHS } from './protocol.ts';
import type { NoteSecrets, Signer, SignerAccount, SignerPublicKeys } from './signer.ts';

/** The signer could not be asked, or refused; the message says which, never a secret. */
export class SignerRequestError extends Error {
  override name = 'SignerRequestError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * The signer's spending policy refused the request (docs/security.md, "The signer's spending policy"): a retry asks
 * the same, so the step parks (failure type SignerRefused) and an operator reads the signer's audit log.
 */
export class SignerRefusedError extends SignerRequestError {
  override name = 'SignerRefusedError';
  constructor(
    message: string,
    readonly rule: string,
  ) {
    super(message, 403);
  }
}

/** The worker's side of the signer process's request API (SIGNER_URL, SIGNER_AUTH_TOKEN). */
export function createRemoteSigner(opts: { url: string; authToken: string; timeoutMs?: number }): Signer {
  const base = opts.url.replace(/\/+$/, '');
  async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${opts.authToken}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
      });
    } catch (error) {
      throw new SignerRequestError(
        `the signer at ${base} did not answer ${path}: ${error instanceof Error ? error.message : String(error)}; is the signer process running (npm run start:signer)?`,
      );
    }
    const answer = (await response.json().catch(() => null)) as { success?: boolean; data?: T; error?: string; code?: string; rule?: string } | null;
    if (response.status === 403 && answer?.code === 'SIGNER_POLICY_REFUSED')
      throw new SignerRefusedError(`the signer refused ${path}: ${answer.error}`, answer.rule ?? 'unknown');
    if (!response.ok || !answer?.success) {
      const reason = answer?.error ?? `HTTP ${response.status}`;
      const hint = response.status === 401 ? ' (SIGNER_AUTH_TOKEN of the worker and the signer differ)' : '';
      throw new SignerRequestError(`the signer refused ${path}: ${reason}${hint}`, response.status);
    }
    return answer.data as T;
  }
  const secrets = (data: { nullifier: string; secret: string }): NoteSecrets => ({ nullifier: BigInt(data.nullifier), secret: BigInt(data.secret) });

  return {
    publicKeys: () => call<SignerPublicKeys>('GET', SIGNER_PATHS.publicKeys),
    async signTransaction(account: SignerAccount, unsignedTransaction: Hex) {
      const data = await call<{ signedTransaction: Hex }>('POST', SIGNER_PATHS.signTransaction, { account, transaction: unsignedTransaction });
      return data.signedTransaction;
    },
    depositSecrets: async (scope, index) =>
      secrets(await call('POST', SIGNER_PATHS.noteSecrets, { kind: 'deposit', scope: scope.toString(), index: index.toString() })),
    withdrawalSecrets: async (label, index) =>
      secrets(await call('POST', SIGNER_PATHS.noteSecrets, { kind: 'withdrawal', label: label.toString(), index: index.toString() })),
  };
}
