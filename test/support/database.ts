import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../devnet/ports.ts';
import { startLocalPostgres } from '../../devnet/postgres.ts';
import { migrateDatabase } from '../../src/db/client.ts';
import type { transfers } from '../../src/db/schema.ts';

/** A migrated Postgres of its own for one test file (TEST_DATABASE_URL: that server instead of an embedded one). */
export interface TestPostgres {
  url: string;
  /** Stops the server and deletes its data folder. */
  stop(): Promise<void>;
}

export async function startTestPostgres(name: string): Promise<TestPostgres> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `${name}-`));
  try {
    const postgres = await startLocalPostgres({ databaseUrl: process.env.TEST_DATABASE_URL, dataDir, port: await freePort(), ephemeral: true });
    await migrateDatabase(postgres.url);
    return {
      url: postgres.url,
      async stop() {
        await postgres.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * A transfers row for tests that need one to exist (projection, feeds, limits, webhooks): a 10 USDC route from
 * chain 1 to chain 2 via hub 3, awaiting its deposit, at account `index`; `overrides` sets anything else.
 */
export function transferRow(index: number, overrides: Partial<typeof transfers.$inferInsert> = {}): typeof transfers.$inferInsert {
  return {
    routeId: `rt_${index.toString(16).padStart(32, '0')}`,
    accountIndex: index,
    status: 'AWAITING_DEPOSIT',
    symbol: 'USDC',
    destSymbol: 'USDC',
    sourceChainId: 1,
    destChainId: 2,
    hubChainId: 3,
    amount: '10',
    quotedOutputAmount: '9',
    feeAmount: '1',
    bridgeFeeAmount: '0',
    privacyFeeAmount: '0',
    etaSeconds: 60,
    route: ['relay'],
    sourceToken: '0x1',
    sourceDecimals: 6,
    destToken: '0x2',
    destDecimals: 6,
    hubToken: '0x3',
    hubDecimals: 6,
    depositAddress: `0xd${index}`,
    hubAccount: '0xh',
    hubIsSmartAccount: false,
    exitAccount: '0xe',
    userDestinationAddress: '0x000000000000000000000000000000000000dEaD',
    depositDeadline: new Date(Date.now() + 600_000),
    ...overrides,
  };
}
