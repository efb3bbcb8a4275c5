import type { LocalAccount } from 'viem';
import type { RouteKeyring } from '../src/accounts/routeAccounts.ts';
import type { ChainClients } from '../src/chain/clients.ts';
import type { TxSender } from '../src/chain/txSender.ts';
import type { Database } from '../src/db/client.ts';
import type { DepositAddressBridge } from '../src/providers/bridge.ts';
import type { BurnAndMintBridge } from '../src/providers/cctp/types.ts';
import type { PrivacyPool } from '../src/providers/privacy-pool/types.ts';

/** What the activities need from the outside world; tests inject their own. */
export interface ActivityDeps {
  db: Database;
  chains: ChainClients;
  sender: TxSender;
  /** The bridge of the configured mode (BRIDGE_PROVIDER). */
  bridge: { mode: 'relay'; relay: DepositAddressBridge } | { mode: 'cctp'; cctp: BurnAndMintBridge };
  pool: PrivacyPool;
  keyring: RouteKeyring;
  /** Funded account that tops up per-route accounts with native gas. */
  gasAccount: LocalAccount;
  /** How often long-running activities poll a chain or provider. */
  pollIntervalMs: number;
}
