/**
 * `node dist/src/migrate.js` (`npm run migrate` from the sources): applies the database migrations once, as a job of
 * its own, under the schema owner's role (DATABASE_URL of a member of private_route_worker). A deployment runs it
 * before it rolls the workers and APIs, which then start with DATABASE_MIGRATIONS=skip (docs/operations.md, "First
 * deployment"). Safe to run twice or beside a worker that migrates: migrations queue on an advisory lock.
 */
import { migrateDatabase } from './db/client.ts';
import { createLogger } from './logger.ts';

const logger = createLogger({ fields: { component: 'migrate' } });
const url = process.env.DATABASE_URL;
if (!url) {
  logger.error('DATABASE_URL is not set: give the job the schema owner’s connection (a member of private_route_worker)');
  process.exit(2);
}
try {
  const { applied } = await migrateDatabase(url);
  logger.info('migrations applied', { applied, database: databaseName(url) });
} catch (error) {
  // postgres.js errors name the server's complaint, never the connection string's password.
  logger.error('migrations failed', { error: String(error) });
  process.exit(1);
}

/** host/database of a connection string, without its credentials. */
function databaseName(connection: string): string {
  try {
    const parsed = new URL(connection);
    return `${parsed.host}${parsed.pathname}`;
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}
