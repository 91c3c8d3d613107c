import { loadConfig } from '../config.js';
import { connect } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { databaseStartMessage, explained } from '../start-errors.js';
import { parseOptions, write, type Command } from './command.js';

export const migrate: Command = {
  summary: 'Bring the database schema up to date and exit.',
  usage: `music-catalogue migrate

Bring the schema of DATABASE_URL up to date and exit.
Safe to run while instances start: migrations take a lock.`,
  async run(args, ctx) {
    parseOptions(args, {});
    const config = loadConfig(ctx.env);
    const connection = connect(config);
    try {
      const results = await explained(
        () => migrateToLatest(connection.db),
        (err) => databaseStartMessage(err, config.databaseUrl, config.pgConnectTimeoutMs),
      );
      const applied = results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
      write(ctx.stdout, applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
      return 0;
    } finally {
      await connection.close();
    }
  },
};
