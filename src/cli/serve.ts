import { loadConfig } from '../config.js';
import { startService } from '../cluster.js';
import type { Command } from './command.js';
import { parseOptions } from './command.js';

export const serve: Command = {
  summary: 'Start the HTTP service (migrates the database first).',
  usage: `music-catalogue serve

Start the HTTP service. Migrates the database first. Configured by the environment:
PORT, HOST, DATABASE_URL, WORKERS, LOG_LEVEL, CATALOGUE_ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE, ... (see README).`,
  async run(args, ctx) {
    parseOptions(args, {});
    await startService(loadConfig(ctx.env));
    // The server keeps the process alive; it exits on SIGTERM/SIGINT.
    return 0;
  },
};
