import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { DevnetManifest } from './manifest.ts';

/** What `routectl` reads to find a running local stack. */
export interface StackInfo {
  apiUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiUrl: string;
  relayUrl: string;
  databaseUrl: string;
  manifest: DevnetManifest;
}

export const STACK_INFO_FILE = 'stack.json';

/** The local stack's payload codec key and codec endpoint token (owner-only), read by routectl. */
export const PAYLOAD_CODEC_FILE = 'payload-codec.json';

export interface DevnetPayloadCodec {
  keyId: string;
  /** Base64 of the 32-byte AES-256 key. */
  key: string;
  authToken: string;
}

/** The worker's configuration (environment variables) for `npm run devnet:worker`; owner-only. */
export const WORKER_ENV_FILE = 'worker-env.json';

/** The API's configuration (the signer's xpubs, no key) for running src/server.ts against the stack; owner-only. */
export const API_ENV_FILE = 'api-env.json';

export function readStackInfo(dataDir: string): StackInfo {
  const file = path.join(dataDir, STACK_INFO_FILE);
  if (!existsSync(file)) throw new Error(`no local stack found (${file} is missing); start it with "npm start"`);
  return JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
}
