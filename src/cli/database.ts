import { loadConfig } from '../config.js';
import { connect, type Connection } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import type { CliContext } from './command.js';

/** Opens DATABASE_URL, brings the schema up to date, runs `fn`, and always closes the connection. */
export async function withDatabase<T>(ctx: CliContext, fn: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = connect(loadConfig(ctx.env));
  try {
    await migrateToLatest(connection.db);
    return await fn(connection);
  } finally {
    await connection.close();
  }
}
