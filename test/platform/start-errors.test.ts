import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backend, postgresServerUrl } from '../database.js';
import { freePort, runCli, startServerProcess } from '../process.js';

// A start that fails says so in one line naming the setting, prints no admin token, and exits 1.

const dir = mkdtempSync(join(tmpdir(), 'mc-start-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = { LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1' };

async function failedStart(env: Record<string, string>) {
  const res = await runCli(['serve'], { ...base, ...env });
  expect(res.code).toBe(1);
  expect(res.stdout).toBe('');
  // One line, and no token: nothing was created that nobody saw.
  expect(res.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(res.stderr).not.toContain('mc_');
  return res.stderr.trimEnd();
}

describe('start errors name the setting, in one line', () => {
  it('HOST=999.1.1.1 (not an address) is refused before anything else, naming HOST; no admin token is printed', async () => {
    const file = join(dir, 'host.db');
    expect(await failedStart({ HOST: '999.1.1.1', DATABASE_URL: `sqlite:${file}` })).toBe(
      'music-catalogue: invalid configuration: HOST is not a valid IPv4 address, got "999.1.1.1"',
    );
  });

  it('a HOST name that does not resolve, or an address not of this machine, names HOST and creates no token (one process and a cluster)', async () => {
    for (const workers of ['1', '2']) {
      const file = join(dir, `host-name-${workers}.db`);
      const env = { DATABASE_URL: `sqlite:${file}`, WORKERS: workers, RATE_LIMIT_PER_MINUTE: '0' };
      expect(await failedStart({ ...env, HOST: 'no-such-host.invalid' })).toMatch(
        /^music-catalogue serve: HOST=no-such-host\.invalid: .*\((ENOTFOUND|EAI_AGAIN)\)$/,
      );
      expect(await failedStart({ ...env, HOST: '192.0.2.1' })).toMatch(
        /^music-catalogue serve: HOST=192\.0\.2\.1: not an address of this machine.*\(EADDRNOTAVAIL\)$/,
      );
      // The token is created only once the service listens: the next good start prints one.
      const srv = await startServerProcess(env);
      try {
        expect(srv.stderr()).toMatch(/Bearer mc_/);
      } finally {
        srv.child.kill('SIGTERM');
        await srv.exited;
      }
    }
  });

  it('a PORT another process listens on names PORT', async () => {
    const other = await startServerProcess({ DATABASE_URL: `sqlite:${join(dir, 'port-a.db')}`, CATALOGUE_ADMIN_TOKEN: 'operator-chosen-admin-token-123' });
    try {
      const port = new URL(other.url).port;
      expect(await failedStart({ DATABASE_URL: `sqlite:${join(dir, 'port-b.db')}`, PORT: port })).toBe(
        `music-catalogue serve: PORT=${port}: another process already listens on 127.0.0.1:${port} (EADDRINUSE)`,
      );
    } finally {
      other.child.kill('SIGTERM');
      await other.exited;
    }
  });

  it('refuses sqlite::memory: with several workers (each would have a database of its own), naming both settings', async () => {
    expect(await failedStart({ DATABASE_URL: 'sqlite::memory:', WORKERS: '2', RATE_LIMIT_PER_MINUTE: '0' })).toBe(
      'music-catalogue: invalid configuration: WORKERS=2 cannot share DATABASE_URL=sqlite::memory: (each worker would have a database of its own); use WORKERS=1 or a file',
    );
  });

  it('refuses a SQLite path whose directory does not exist (a typo would start an empty service), unless SQLITE_CREATE_DIRECTORY=on', async () => {
    const file = join(dir, 'typo', 'deeper', 'x.db');
    expect(await failedStart({ DATABASE_URL: `sqlite:${file}` })).toBe(
      `music-catalogue: invalid configuration: DATABASE_URL=sqlite:${file}: the directory ${join(dir, 'typo', 'deeper')} does not exist; create it, or set SQLITE_CREATE_DIRECTORY=on`,
    );
    expect(existsSync(join(dir, 'typo'))).toBe(false);
    // migrate and the other commands refuse it too
    const migrate = await runCli(['migrate'], { DATABASE_URL: `sqlite:${file}` });
    expect(migrate.code).toBe(1);
    expect(existsSync(join(dir, 'typo'))).toBe(false);
    const asked = await runCli(['migrate'], { DATABASE_URL: `sqlite:${file}`, SQLITE_CREATE_DIRECTORY: 'on' });
    expect(asked.code).toBe(0);
    expect(existsSync(file)).toBe(true);
  });

  it('an unreachable PostgreSQL names DATABASE_URL, the address and ECONNREFUSED', async () => {
    const port = await freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/test`;
    expect(await failedStart({ DATABASE_URL: url })).toBe(
      `music-catalogue serve: DATABASE_URL=${url}: cannot connect to PostgreSQL at 127.0.0.1:${port}: connection refused: is the server running, and listening on that host and port? (ECONNREFUSED)`,
    );
    // the password is never printed
    const withPassword = `postgres://postgres:s3cret-pw@127.0.0.1:${port}/test`;
    const said = await failedStart({ DATABASE_URL: withPassword });
    expect(said).not.toContain('s3cret-pw');
    expect(said).toContain(`DATABASE_URL=postgres://postgres:***@127.0.0.1:${port}/test`);
  });
});

describe.runIf(backend === 'postgres')('start errors on a reachable PostgreSQL', () => {
  const server = () => new URL(postgresServerUrl());
  const where = () => `${server().hostname}:${server().port || 5432}`;

  it('a database that does not exist', async () => {
    const url = server();
    url.pathname = '/no_such_database_mc';
    expect(await failedStart({ DATABASE_URL: url.toString() })).toMatch(
      new RegExp(`^music-catalogue serve: DATABASE_URL=\\S+/no_such_database_mc: the database "no_such_database_mc" does not exist on ${where()}: create it`),
    );
  });

  it('sslmode=verify-full against a server without TLS', async () => {
    const url = server();
    url.searchParams.set('sslmode', 'verify-full');
    expect(await failedStart({ DATABASE_URL: url.toString() })).toMatch(
      new RegExp(
        `^music-catalogue serve: DATABASE_URL=\\S+sslmode=verify-full: sslmode=verify-full asks for TLS, but the server at ${where()} does not support SSL/TLS connections`,
      ),
    );
  });

  it('a search_path schema that does not exist', async () => {
    const url = server();
    url.searchParams.set('options', '-c search_path=no_such_schema_mc');
    expect(await failedStart({ DATABASE_URL: url.toString() })).toMatch(
      /^music-catalogue serve: DATABASE_URL=\S+: the schema no_such_schema_mc named by search_path does not exist in database "\w+": create it/,
    );
  });
});
