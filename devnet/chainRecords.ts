import { and, desc, eq, isNotNull } from 'drizzle-orm';
import { createPublicClient, type Hex, http, TransactionNotFoundError } from 'viem';
import { connectDatabase } from '../src/db/client.ts';
import type { Db } from '../src/db/client.ts';
import { txIntents } from '../src/db/schema.ts';

/**
 * Whether the local chains still hold what Postgres says was mined on them.
 *
 * anvil saves a chain only when it stops cleanly (SIGTERM or SIGINT; devnet/chains.ts). Killed outright (a SIGKILL of
 * its process group, the OOM killer, a power loss) it comes back at its last save, without the blocks since, while
 * Postgres kept its records of them. A route whose recorded send is gone would wait forever for a nonce the chain
 * has already forgotten, so the local stack checks the newest records of each chain at start and refuses to run on
 * chains that lost them, saying what to do.
 */

export interface RecordedChain {
  chainId: number;
  name: string;
  rpcUrl: string;
}

export interface MissingTransaction {
  chain: RecordedChain;
  intentId: number;
  txHash: Hex;
}

/** How many of each chain's newest mined sends are looked up: the blocks lost are the newest ones. */
const NEWEST_PER_CHAIN = 20;

/** The newest mined sends recorded for each chain that the chain itself no longer has. */
export async function missingRecordedTransactions(db: Db, chains: readonly RecordedChain[]): Promise<MissingTransaction[]> {
  const missing: MissingTransaction[] = [];
  for (const chain of chains) {
    const recorded = await db
      .select({ id: txIntents.id, txHash: txIntents.minedTxHash })
      .from(txIntents)
      .where(and(eq(txIntents.chainId, chain.chainId), eq(txIntents.status, 'mined'), isNotNull(txIntents.minedTxHash)))
      .orderBy(desc(txIntents.id))
      .limit(NEWEST_PER_CHAIN);
    if (recorded.length === 0) continue;
    const client = createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 0 }) });
    for (const { id, txHash } of recorded) {
      // A transaction the node has never heard of (not only an unmined one): the chain lost the block it was in.
      const transaction = await client.getTransaction({ hash: txHash as Hex }).catch((error: unknown) => {
        if (error instanceof TransactionNotFoundError) return null;
        throw error;
      });
      if (!transaction?.blockNumber) missing.push({ chain, intentId: id, txHash: txHash as Hex });
    }
  }
  return missing;
}

/** What an operator of the local stack reads when the chains lost recorded blocks. */
export function lostBlocksMessage(missing: readonly MissingTransaction[], dataDir: string): string {
  const chains = [...new Set(missing.map((m) => `${m.chain.name} (chain ${m.chain.chainId})`))].join(', ');
  // Intent ids only: a transaction hash beside what names a route would link the route's sends in a log.
  const intents = missing.map((m) => `#${m.intentId}`).join(', ');
  return [
    `the local chains lost blocks that ${dataDir} records as mined: ${chains} no longer hold ${missing.length} recorded send(s) (intents ${intents}).`,
    'anvil saves a chain only when it stops cleanly; it was killed outright (SIGKILL of the whole process group, the OOM killer, a power loss) and came back at its last save.',
    `The transfers recorded there cannot finish on these chains. Start a fresh local stack: remove ${dataDir} (or set DATA_DIR to a new folder) and run npm start again.`,
  ].join(' ');
}

/** Refuses to go on when the chains lost blocks that the database at `databaseUrl` records as mined. */
export async function assertChainsHoldRecords(databaseUrl: string, chains: readonly RecordedChain[], dataDir: string): Promise<void> {
  const database = connectDatabase(databaseUrl, { max: 1 });
  try {
    const missing = await missingRecordedTransactions(database.db, chains);
    if (missing.length > 0) throw new Error(lostBlocksMessage(missing, dataDir));
  } finally {
    await database.close();
  }
}
