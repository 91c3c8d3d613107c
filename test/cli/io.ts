import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { CliContext } from '../../src/cli/command.js';

/** A command's context with captured output, on its own fresh SQLite file. */
export function cliIo(options: { databaseUrl?: string; tty?: boolean; stdin?: string } = {}) {
  const isTTY = options.tty ?? false;
  const databaseUrl = options.databaseUrl ?? `sqlite:${join(mkdtempSync(join(tmpdir(), 'mc-cli-')), 'catalogue.db')}`;
  let out = '';
  let err = '';
  const stdout = Object.assign(new PassThrough(), { isTTY });
  const stderr = Object.assign(new PassThrough(), { isTTY });
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const ctx: CliContext = {
    env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    stdout,
    stderr,
    stdin: Readable.from(options.stdin === undefined ? [] : [options.stdin]),
  };
  return { ctx, databaseUrl, stdout: () => out, stderr: () => err };
}
