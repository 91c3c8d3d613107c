import { loadConfig } from '../config.js';
import { connect, type Connection } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { databaseStartMessage, explained } from '../start-errors.js';
import type { CliContext } from './command.js';

/** Opens DATABASE_URL, brings the schema up to date, runs `fn`, and always closes the connection. */
export async function withDatabase<T>(ctx: CliContext, fn: (connection: Connection) => Promise<T>): Promise<T> {
  const config = loadConfig(ctx.env);
  const connection = connect(config);
  try {
    await explained(
      () => migrateToLatest(connection.db),
      (err) => databaseStartMessage(err, config.databaseUrl, config.pgConnectTimeoutMs),
    );
    return await fn(connection);
  } finally {
    await connection.close();
  }
}
