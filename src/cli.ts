#!/usr/bin/env node

import { ConfigError, loadConfig } from './config.js';
import { connect } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { startServer } from './server.js';

interface Command {
  summary: string;
  usage: string;
  run(args: string[]): Promise<void>;
}

function helpRequested(args: string[]): boolean {
  return args.includes('--help') || args.includes('-h');
}

const commands: Record<string, Command> = {
  serve: {
    summary: 'Start the HTTP service (migrates the database first).',
    usage: 'music-catalogue serve\n\nConfigured by the environment: PORT, HOST, DATABASE_URL, LOG_LEVEL, CATALOGUE_ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE (see README).',
    async run() {
      await startServer(loadConfig());
    },
  },
  migrate: {
    summary: 'Bring the database schema up to date and exit.',
    usage: 'music-catalogue migrate\n\nUses DATABASE_URL. Safe to run while instances start: migrations take a lock.',
    async run() {
      const config = loadConfig();
      const connection = connect(config);
      try {
        const results = await migrateToLatest(connection.db);
        const applied = results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'schema is up to date\n');
      } finally {
        await connection.close();
      }
    },
  },
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `Usage: music-catalogue <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun music-catalogue <command> --help for a command's options.\n`;
}

export async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`music-catalogue: unknown command "${name}"\n\n${usage()}`);
    process.exitCode = 2;
    return;
  }
  if (helpRequested(rest)) {
    process.stdout.write(`${command.usage}\n`);
    return;
  }
  await command.run(rest);
}


main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`music-catalogue: invalid configuration: ${err.message}\n`);
  } else {
    process.stderr.write(`music-catalogue: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  process.exit(1);
});
