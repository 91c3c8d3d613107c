import { loadConfig } from '../config.js';
import { connect } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { parseOptions, write, type Command } from './command.js';

export const migrate: Command = {
  summary: 'Bring the database schema up to date and exit.',
  usage: `music-catalogue migrate

Bring the schema of DATABASE_URL up to date and exit.
Safe to run while instances start: migrations take a lock.`,
  async run(args, ctx) {
    parseOptions(args, {});
    const connection = connect(loadConfig(ctx.env));
    try {
      const results = await migrateToLatest(connection.db);
      const applied = results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
      write(ctx.stdout, applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
      return 0;
    } finally {
      await connection.close();
    }
  },
};
