import { spawn } from 'node:child_process';
import { existsSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { loadConfig, type Config } from '../config.js';
import { connect, openSqlite } from '../db/connect.js';
import { redactedUrl } from '../start-errors.js';
import { parseOptions, UsageError, write, type CliContext, type Command } from './command.js';

// An online backup of everything the service stores (catalogue, users, aliases, tokens, webhooks and
// their deliveries, events, idempotency keys, the migration history), and its restore into a fresh
// database. SQLite: the online backup API (better-sqlite3's backup) from a read snapshot, so writers
// carry on while it copies. PostgreSQL: pg_dump and pg_restore (the custom format), which read one
// snapshot too; they must be on PATH and pg_dump no older than the server.

/** The file is written next to its final name and renamed into place: a failed backup leaves no half file. */
const partial = (file: string) => `${file}.partial-${process.pid}`;

function requireFile(values: { file?: string | boolean }): string {
  if (typeof values.file !== 'string' || values.file === '') throw new UsageError('--file PATH is required');
  return values.file;
}

/** Runs a PostgreSQL client program, resolving with its output; rejects with its standard error when it fails. */
function run(program: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code === 'ENOENT'
            ? `${program} was not found on PATH: install PostgreSQL's client programs (Debian/Ubuntu: apt-get install postgresql-client)`
            : err.message,
        ),
      ),
    );
    child.once('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${program} failed (exit ${code}): ${stderr.trim().split('\n').join('; ')}`)),
    );
  });
}

/**
 * DATABASE_URL as libpq (pg_dump, pg_restore) reads it the way node-postgres does: node-postgres
 * decodes a `+` in the query as a space (`options=-c+search_path=x`), libpq does not.
 */
function libpqUrl(url: string): string {
  const u = new URL(url);
  u.search = [...u.searchParams].map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&');
  return u.toString();
}

/** The schema the service's tables are in: the first of search_path that exists (current_schema()). */
async function currentSchema(config: Config): Promise<string> {
  const connection = connect(config);
  try {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(connection.db);
    const schema = rows[0]?.schema;
    if (!schema) throw new Error(`DATABASE_URL=${redactedUrl(config.databaseUrl)}: search_path names no schema that exists`);
    return schema;
  } finally {
    await connection.close();
  }
}

async function backupSqlite(config: Config, file: string): Promise<void> {
  if (config.databaseUrl === 'sqlite::memory:') throw new UsageError('an in-memory database (sqlite::memory:) has nothing to back up');
  const source = config.databaseUrl.slice('sqlite:'.length);
  if (!existsSync(source)) throw new Error(`DATABASE_URL=${config.databaseUrl}: no such database file`);
  const handle = openSqlite({ ...config, sqliteCreateDirectory: false });
  try {
    // One step for every page: the copy is read in one read transaction, a snapshot the service's
    // writers do not wait for (WAL), instead of small steps that restart whenever another process commits.
    await handle.backup(partial(file), { progress: () => 2 ** 30 });
  } finally {
    handle.close();
  }
  renameSync(partial(file), file);
}

async function backupPostgres(config: Config, file: string): Promise<void> {
  const schema = await currentSchema(config);
  await run('pg_dump', ['--format=custom', `--schema=${schema}`, `--file=${partial(file)}`, `--dbname=${libpqUrl(config.databaseUrl)}`]);
  renameSync(partial(file), file);
}

async function restoreSqlite(config: Config, file: string, ctx: CliContext): Promise<void> {
  if (config.databaseUrl === 'sqlite::memory:') throw new UsageError('cannot restore into an in-memory database (sqlite::memory:)');
  const target = config.databaseUrl.slice('sqlite:'.length);
  if (existsSync(target) && statSync(target).size > 0) {
    throw new Error(
      `DATABASE_URL=${config.databaseUrl} already exists: restore into a fresh database (stop the service and move the file, with its -wal and -shm, away first)`,
    );
  }
  if (!existsSync(dirname(target)) && !config.sqliteCreateDirectory) {
    throw new Error(`DATABASE_URL=${config.databaseUrl}: the directory ${dirname(target)} does not exist; create it, or set SQLITE_CREATE_DIRECTORY=on`);
  }
  // The backup is checked before it becomes the database: a file that is not one is refused.
  const backup = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const check = backup.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`${file} is damaged (quick_check: ${String(check)})`);
    // Copied through the backup API as well, so the restored file is a database of its own (WAL mode set on first open).
    await backup.backup(partial(target));
  } catch (err) {
    rmSync(partial(target), { force: true });
    if ((err as { code?: string }).code === 'SQLITE_NOTADB') throw new Error(`${file} is not a SQLite backup`);
    throw err;
  } finally {
    backup.close();
  }
  rmSync(`${target}-wal`, { force: true });
  rmSync(`${target}-shm`, { force: true });
  renameSync(partial(target), target);
  write(ctx.stderr, `restored ${file} into ${config.databaseUrl}`);
}

async function restorePostgres(config: Config, file: string, ctx: CliContext): Promise<void> {
  // The backup names its schema ("SCHEMA - name" in its table of contents); it is restored under that name.
  const contents = await run('pg_restore', ['--list', file]);
  const schema = /^\d+; \d+ \d+ SCHEMA - (\S+) /m.exec(contents)?.[1];
  if (!schema) throw new Error(`${file} is not a backup of music-catalogue's PostgreSQL schema (no schema in its contents)`);
  const connection = connect(config);
  let exists: boolean;
  try {
    const { rows } = await sql<{ tables: number; schemas: number }>`
      select (select count(*)::int from information_schema.tables where table_schema = ${schema}) as tables,
             (select count(*)::int from pg_namespace where nspname = ${schema}) as schemas`.execute(connection.db);
    if ((rows[0]?.tables ?? 0) > 0) {
      throw new Error(`DATABASE_URL=${redactedUrl(config.databaseUrl)}: schema ${schema} already has tables: restore into a fresh database`);
    }
    exists = (rows[0]?.schemas ?? 0) > 0;
  } finally {
    await connection.close();
  }
  // An empty schema of that name (public, in a new database) is kept: its CREATE SCHEMA is left out.
  const list = `${partial(file)}.list`;
  if (exists) writeFileSync(list, contents.replace(/^\d+; \d+ \d+ SCHEMA - .*$/gm, ''));
  try {
    // One transaction: a restore that fails leaves the database as it was.
    await run('pg_restore', [
      '--no-owner',
      '--no-privileges',
      '--exit-on-error',
      '--single-transaction',
      ...(exists ? [`--use-list=${list}`] : []),
      `--dbname=${libpqUrl(config.databaseUrl)}`,
      file,
    ]);
  } finally {
    rmSync(list, { force: true });
  }
  write(ctx.stderr, `restored ${file} (schema ${schema}) into ${redactedUrl(config.databaseUrl)}`);
}

export const backupCommand: Command = {
  summary: 'Back up the whole database to a file while the service runs.',
  usage: `music-catalogue backup --file PATH

Copy everything the service stores (catalogue, users, aliases, tokens, webhooks, events, ...) into
PATH, while the service keeps serving and writing: the copy is one consistent snapshot, and every
write acknowledged before the backup started is in it.
  SQLite: SQLite's online backup API; PATH is a SQLite database file.
  PostgreSQL: pg_dump --format=custom of the schema the service uses (search_path); pg_dump must be on
  PATH, of the server's major version or newer.
PATH appears only once complete. Restore with music-catalogue restore --file PATH.

Uses DATABASE_URL.`,
  async run(args, ctx) {
    const { values } = parseOptions(args, { file: { type: 'string' } });
    const file = requireFile(values);
    const config = loadConfig(ctx.env);
    const started = Date.now();
    try {
      if (config.databaseUrl.startsWith('sqlite:')) await backupSqlite(config, file);
      else await backupPostgres(config, file);
    } finally {
      rmSync(partial(file), { force: true });
    }
    write(ctx.stderr, `backed up ${redactedUrl(config.databaseUrl)} to ${file} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    return 0;
  },
};

export const restoreCommand: Command = {
  summary: 'Restore a backup into a fresh database.',
  usage: `music-catalogue restore --file PATH

Restore a backup made by music-catalogue backup into DATABASE_URL, which must be fresh: a SQLite
file that does not exist yet, or a PostgreSQL database whose schema (search_path) has no tables.
  SQLite: the backup is checked (quick_check) and copied into place.
  PostgreSQL: pg_restore in one transaction, into the schema the backup was taken from (its name is in
  the backup; point search_path at it); pg_restore must be on PATH.
Then start the service on DATABASE_URL: it migrates a backup of an older version forward.`,
  async run(args, ctx) {
    const { values } = parseOptions(args, { file: { type: 'string' } });
    const file = requireFile(values);
    if (!existsSync(file)) throw new UsageError(`--file ${file}: no such file`);
    const config = loadConfig(ctx.env);
    if (config.databaseUrl.startsWith('sqlite:')) await restoreSqlite(config, file, ctx);
    else await restorePostgres(config, file, ctx);
    return 0;
  },
};
