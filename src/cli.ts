#!/usr/bin/env node

import { ConfigError } from './config.js';
import { UsageError, type CliContext, type Command } from './cli/command.js';
import { serve } from './cli/serve.js';
import { migrate } from './cli/migrate.js';
import { openapi } from './cli/openapi.js';
import { token } from './cli/token.js';
import { seed } from './cli/seed.js';
import { exportCommand } from './cli/export.js';
import { importCommand } from './cli/import.js';
import { eventsCommand } from './cli/events.js';
import { packageInfo } from './package-info.js';

const commands: Record<string, Command> = {
  serve,
  migrate,
  token,
  seed,
  export: exportCommand,
  import: importCommand,
  events: eventsCommand,
  openapi,
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `Usage: music-catalogue <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun music-catalogue <command> --help for a command's options; music-catalogue --version prints the version.\n`;
}

const helpRequested = (args: string[]) => args.includes('--help') || args.includes('-h');

/** Runs one command line; resolves with the exit code. */
export async function main(argv: string[], ctx: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(usage());
    return 0;
  }
  if (name === '--version' || name === '-V') {
    ctx.stdout.write(`music-catalogue ${packageInfo.version}\n`);
    return 0;
  }
  // A name is data: `music-catalogue constructor` is an unknown command, not Object.prototype's.
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    ctx.stderr.write(`music-catalogue: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  if (helpRequested(rest)) {
    ctx.stdout.write(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest, ctx);
  } catch (err) {
    if (err instanceof UsageError) {
      ctx.stderr.write(`music-catalogue ${name}: ${err.message}\n\n${command.usage}\n`);
      return 2;
    }
    if (err instanceof ConfigError) {
      ctx.stderr.write(`music-catalogue: invalid configuration: ${err.message}\n`);
      return 1;
    }
    ctx.stderr.write(`music-catalogue ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

main(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }).then(
  (code) => {
    // serve keeps running (its server holds the event loop); everything else ends with its code.
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`music-catalogue: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
