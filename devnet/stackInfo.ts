import { type LocalPayloadCodec, type LocalStackInfo, readLocalStackInfo } from '../src/cli/localStack.ts';
import type { DevnetManifest } from './manifest.ts';

export { PAYLOAD_CODEC_FILE, STACK_INFO_FILE, WEBHOOK_SECRET_FILE } from '../src/cli/localStack.ts';

/** What the local stack writes into its data folder for routectl and the devnet tools (src/cli/localStack.ts). */
export interface StackInfo extends LocalStackInfo {
  relayUrl: string;
  manifest: DevnetManifest;
}

export type DevnetPayloadCodec = LocalPayloadCodec;

/** The worker's configuration (environment variables) for `npm run devnet:worker`; owner-only. */
export const WORKER_ENV_FILE = 'worker-env.json';

/** The API's configuration (the signer's xpubs, no key) for running src/api.ts against the stack; owner-only. */
export const API_ENV_FILE = 'api-env.json';

export function readStackInfo(dataDir: string): StackInfo {
  return readLocalStackInfo<StackInfo>(dataDir);
}
