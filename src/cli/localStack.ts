import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * How routectl finds a running local stack (`npm start`): the stack writes these files into its data folder
 * (devnet/stack.ts), routectl reads them when DATABASE_URL and TEMPORAL_ADDRESS are not set. Only the fields
 * routectl needs are typed here; the stack writes more (devnet/stackInfo.ts).
 */
export interface LocalStackInfo {
  apiUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiUrl: string;
  databaseUrl: string;
  manifest: { chains: { chainId: number; rpcUrl: string }[] };
}

export const STACK_INFO_FILE = 'stack.json';

/** The local stack's payload codec key and codec endpoint token (owner-only), read by routectl. */
export const PAYLOAD_CODEC_FILE = 'payload-codec.json';

/** The local stack's WEBHOOK_SIGNING_SECRET (owner-only), read by routectl to hand out the derived webhook secrets. */
export const WEBHOOK_SECRET_FILE = 'webhook-signing-secret';

export interface LocalPayloadCodec {
  keyId: string;
  /** Base64 of the 32-byte AES-256 key. */
  key: string;
  authToken: string;
}

export function readLocalStackInfo<T extends LocalStackInfo = LocalStackInfo>(dataDir: string): T {
  const file = path.join(dataDir, STACK_INFO_FILE);
  if (!existsSync(file)) throw new Error(`no local stack found (${file} is missing); start it with "npm start"`);
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}
