import { Hono, type Context } from 'hono';
import { BaseError } from 'viem';
import type { Logger } from '../logger.ts';
import { serveHttp, type HttpServer } from '../observability/http.ts';
import { bearerToken, matchesSecretDigest, secretDigest } from '../secretTokens.ts';
import { SIGNER_PATHS, noteSecretsRequest, signTransactionRequest } from './protocol.ts';
import { createRouteAddressBook } from '../accounts/routeAccounts.ts';
import { SignerPolicyNotReady, SignerPolicyRefusal, type SpendingPolicy } from './policy/spendingPolicy.ts';
import { describeSignerAccount, type Signer, type SignerAccount, signerAccountAddress } from './signer.ts';

/**
 * The signer process's request API: three authenticated routes and an unauthenticated /healthz, nothing else. Every request carries
 * `Authorization: Bearer <SIGNER_AUTH_TOKEN>`; bodies are validated before any key is touched; then the spending
 * policy (when given: always, in the signer process unless SIGNER_POLICY=off) decides, and a refusal is a 403 with
 * code SIGNER_POLICY_REFUSED and the rule. Answers and logs carry addresses and signatures, never a key or the token.
 */
export function createSignerApp(signer: Signer, opts: { authToken: string; logger: Logger; policy?: SpendingPolicy }): Hono {
  const app = new Hono();
  const expected = secretDigest(opts.authToken);
  const fail = (c: Context, status: 400 | 401 | 404 | 500, error: string) => c.json({ success: false, error }, status);
  const refused = (c: Context, refusal: SignerPolicyRefusal) => {
    opts.logger.warn('the spending policy refused a request', { rule: refusal.rule, reason: refusal.message });
    return c.json(
      {
        success: false,
        error: `refused by the signer's spending policy (${refusal.rule}): ${refusal.message}`,
        code: 'SIGNER_POLICY_REFUSED',
        rule: refusal.rule,
      },
      403,
    );
  };
  let addresses: Promise<(account: SignerAccount) => `0x${string}`> | undefined;
  const addressOf = async (account: SignerAccount) => {
    addresses ??= signer.publicKeys().then((keys) => {
      const book = createRouteAddressBook(keys.xpubs);
      return (a: SignerAccount) => signerAccountAddress(keys, a, (role, index) => book.routeAddresses(index)[role]);
    });
    return (await addresses)(account);
  };

  // For load balancers and orchestrators: no token, and nothing in the answer but that the process serves.
  app.get(SIGNER_PATHS.health, (c) => c.json({ status: 'ok' }));

  app.use('*', async (c, next) => {
    if (!matchesSecretDigest(bearerToken(c.req.header('authorization')) ?? '', expected))
      return fail(c, 401, 'missing or wrong signer token (Authorization: Bearer <SIGNER_AUTH_TOKEN>)');
    await next();
  });

  app.get(SIGNER_PATHS.publicKeys, async (c) => c.json({ success: true, data: await signer.publicKeys() }));

  app.post(SIGNER_PATHS.signTransaction, async (c) => {
    const parsed = signTransactionRequest.safeParse(await jsonBody(c));
    if (!parsed.success) return fail(c, 400, `invalid request: ${issues(parsed.error)}`);
    const { account, transaction } = parsed.data;
    try {
      await addressOf(account);
    } catch (error) {
      // A relay sender index past POOL_RELAY_SENDERS: an account this signer does not have.
      if (error instanceof RangeError) return fail(c, 400, `invalid request: ${error.message}`);
      throw error;
    }
    try {
      if (opts.policy) await opts.policy.checkTransaction(account, await addressOf(account), transaction as `0x${string}`);
    } catch (error) {
      if (error instanceof SignerPolicyRefusal) return refused(c, error);
      if (error instanceof SignerPolicyNotReady) return c.json({ success: false, error: error.message, code: 'SIGNER_POLICY_NOT_READY' }, 503);
      // An unreadable transaction is the caller's error, as below.
      if (!(error instanceof BaseError)) throw error;
      return fail(c, 400, `the transaction cannot be signed: ${error.shortMessage}`);
    }
    try {
      const signed = await signer.signTransaction(account, transaction as `0x${string}`);
      opts.logger.info('signed a transaction', { account: describeSignerAccount(account) });
      return c.json({ success: true, data: { signedTransaction: signed } });
    } catch (error) {
      // viem's parse errors name the field that is wrong; they never carry a key.
      return fail(c, 400, `the transaction cannot be signed: ${error instanceof Error ? error.message.split('\n')[0] : 'unreadable'}`);
    }
  });

  app.post(SIGNER_PATHS.noteSecrets, async (c) => {
    const parsed = noteSecretsRequest.safeParse(await jsonBody(c));
    if (!parsed.success) return fail(c, 400, `invalid request: ${issues(parsed.error)}`);
    const request = parsed.data;
    try {
      await opts.policy?.checkNoteSecrets(
        request.kind === 'deposit'
          ? { kind: 'deposit', scope: BigInt(request.scope), index: BigInt(request.index) }
          : { kind: 'withdrawal', label: BigInt(request.label), index: BigInt(request.index) },
      );
    } catch (error) {
      if (error instanceof SignerPolicyRefusal) return refused(c, error);
      throw error;
    }
    const secrets =
      request.kind === 'deposit'
        ? await signer.depositSecrets(BigInt(request.scope), BigInt(request.index))
        : await signer.withdrawalSecrets(BigInt(request.label), BigInt(request.index));
    return c.json({ success: true, data: { nullifier: secrets.nullifier.toString(), secret: secrets.secret.toString() } });
  });

  app.notFound((c) => fail(c, 404, `the signer has no ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => {
    opts.logger.error('signer request failed', { path: c.req.path, error: error.name });
    return fail(c, 500, 'the signer could not answer');
  });
  return app;
}

export function startSignerServer(
  signer: Signer,
  opts: { authToken: string; logger: Logger; host: string; port: number; policy?: SpendingPolicy },
): Promise<HttpServer> {
  return serveHttp(createSignerApp(signer, opts), opts.port, opts.host);
}

async function jsonBody(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    return undefined;
  }
}

const issues = (error: { issues: { path: PropertyKey[]; message: string }[] }) =>
  error.issues.map((issue) => `${issue.path.map(String).join('.') || 'body'}: ${issue.message}`).join('; ');
