#!/usr/bin/env node

import { ConfigError } from './config.js';
import { UsageError, parseOptions, type CliContext, type Command } from './cli/command.js';
import { serve } from './cli/serve.js';
import { migrate } from './cli/migrate.js';
import { openapi } from './cli/openapi.js';
import { token } from './cli/token.js';
import { seed } from './cli/seed.js';
import { exportCommand } from './cli/export.js';
import { importCommand } from './cli/import.js';
import { eventsCommand } from './cli/events.js';
import { backupCommand, restoreCommand } from './cli/backup.js';
import { packageInfo } from './package-info.js';

const version: Command = {
  summary: 'Print the version (also -v, --version).',
  usage: `music-catalogue version

Print the version of this build: the package's, which is also the OpenAPI document's info.version
(docs/versioning.md).`,
  async run(args, ctx) {
    parseOptions(args, {});
    ctx.stdout.write(`music-catalogue ${packageInfo.version}\n`);
    return 0;
  },
};

const commands: Record<string, Command> = {
  serve,
  migrate,
  token,
  seed,
  export: exportCommand,
  import: importCommand,
  events: eventsCommand,
  backup: backupCommand,
  restore: restoreCommand,
  openapi,
  version,
};

/** The command being run, for the standard output's error handler below. */
let running = '';

const VERSION_FLAGS = new Set(['--version', '-v', '-V']);

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `Usage: music-catalogue <command> [options]\n\nCommands:\n${lines.join('\n')}\n\nRun music-catalogue <command> --help for a command's options; music-catalogue --version (or -v) prints the version.

Settings come from the environment (see README); node --env-file=.env dist/music-catalogue.mjs <command>
reads them from a file first.\n`;
}

const helpRequested = (args: string[]) => args.includes('--help') || args.includes('-h');

/** Runs one command line; resolves with the exit code. */
export async function main(argv: string[], ctx: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(usage());
    return 0;
  }
  if (VERSION_FLAGS.has(name)) return version.run([], ctx);
  running = name;
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

// A reader that stops reading (`openapi | head -1`, `export | less` quit early) closes the pipe: the
// next write fails with EPIPE. That is the reader's choice, not a failure of the command: end quietly,
// as a Unix filter does, instead of dying with a stack. For serve, standard output is the log stream:
// losing it is a failure (exit 1, so a supervisor restarts the service), said in one line.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE' && running !== 'serve') process.exit(process.exitCode ?? 0);
  process.stderr.write(`music-catalogue: standard output${running === 'serve' ? ' (the log stream)' : ''}: ${err.code ?? err.message}\n`);
  process.exit(1);
});

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
