import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';
import { noProcessRegistry, type ProcessRegistry } from './processes.ts';
import { softHsmToken } from './softhsm.ts';
import { createRemoteSigner } from '../src/signer/remote.ts';
import type { Signer, SignerPublicKeys } from '../src/signer/signer.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export interface SignerProcess {
  url: string;
  authToken: string;
  signer: Signer;
  publicKeys: SignerPublicKeys;
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * The signer process (src/signer.ts) as a child of the local stack, on 127.0.0.1 with a fresh token. The keys
 * reach it in its own environment only; the stack gives the worker its URL and token and the API its xpubs.
 */
export async function startSignerProcess(opts: {
  keys: { mnemonic: string; gasPrivateKey: string; poolRelayerPrivateKey: string };
  /**
   * Where the signer keeps the keys: its environment (the default), or a SoftHSM2 token in this folder, into which
   * `keys` are imported on its first use (the same addresses and notes; the signer process then gets no key).
   */
  softHsmDir?: string;
  /** The spending policy's settings (SIGNER_DATABASE_URL, SIGNER_AUDIT_LOG, the contracts); without them the policy is off. */
  policyEnv?: Record<string, string | undefined>;
  port?: number;
  processes?: ProcessRegistry;
  logLevel?: string;
  readyTimeoutMs?: number;
}): Promise<SignerProcess> {
  const port = opts.port || (await freePort());
  const authToken = randomBytes(32).toString('hex');
  const keyEnv = {
    SIGNER_MNEMONIC: opts.keys.mnemonic,
    GAS_ACCOUNT_PRIVATE_KEY: opts.keys.gasPrivateKey,
    POOL_RELAYER_PRIVATE_KEY: opts.keys.poolRelayerPrivateKey,
  };
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ...(opts.softHsmDir ? tokenWithKeys(opts.softHsmDir, keyEnv) : keyEnv),
    SIGNER_AUTH_TOKEN: authToken,
    SIGNER_HOST: '127.0.0.1',
    SIGNER_PORT: String(port),
    LOG_LEVEL: opts.logLevel ?? 'warn',
    ...(opts.policyEnv ?? { SIGNER_POLICY: 'off' }),
  };
  // Own process group, like the Temporal dev server: Ctrl-C reaches the stack, which stops the signer after the worker drained.
  const child = spawn(process.execPath, ['--import', path.join(repoRoot, 'src/loader/register.mjs'), path.join(repoRoot, 'src/signer.ts')], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const processes = opts.processes ?? noProcessRegistry;
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    processes.forget(child.pid);
  };

  const url = `http://127.0.0.1:${port}`;
  const signer = createRemoteSigner({ url, authToken, timeoutMs: 2000 });
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  let tracked = false;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`the signer process exited (${child.exitCode}) before it served: ${output}`);
    }
    // Recorded once node runs the script (its command line is then the one a later start compares).
    if (!tracked && child.pid !== undefined) {
      processes.track('signer', child);
      tracked = true;
    }
    try {
      const publicKeys = await signer.publicKeys();
      return { url, authToken, signer: createRemoteSigner({ url, authToken }), publicKeys, pid: child.pid, stop };
    } catch (error) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(
          `the signer process did not serve ${url} within ${opts.readyTimeoutMs ?? 30_000} ms: ${error instanceof Error ? error.message : String(error)}; its output: ${output}`,
        );
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The token's settings for the signer, after importing `keys` into it on its first use (src/signerToken.ts init --import). */
function tokenWithKeys(dir: string, keys: Record<string, string>): Record<string, string> {
  const token = softHsmToken(dir);
  if (token.fresh) {
    execFileSync(
      process.execPath,
      ['--import', path.join(repoRoot, 'src/loader/register.mjs'), path.join(repoRoot, 'src/signerToken.ts'), 'init', '--import'],
      {
        cwd: repoRoot,
        env: { PATH: process.env.PATH, ...token.env, ...keys },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
  }
  return token.env;
}
