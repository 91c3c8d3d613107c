import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../process.js';

// The scale-out harness: PostgreSQL clusters (a primary, a streaming standby of it) and PgBouncer,
// each in its own temporary directory, on loopback, on ports picked free. Everything started here is
// registered for teardown, which runs from the tests' afterAll, from globalSetup's teardown, and as a
// last resort (a worker that dies, a run cut short) from the process's exit and signal handlers.

export const PG_BIN = process.env.MC_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** PostgreSQL refuses to run as root: as root (CI), servers and tools run as the postgres OS user. */
const asRoot = process.getuid?.() === 0;

function command(file: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

/** Runs a tool to completion; rejects with its output when it fails or outlives `timeoutMs`. */
export async function run(file: string, args: string[], timeoutMs = 60_000): Promise<string> {
  const [cmd, argv] = command(file, args);
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${file} ${args.join(' ')} failed (${code ?? signal}): ${out}`));
    });
  });
}

const stops = new Map<number, () => void>();
let nextStop = 0;

/** Registers a synchronous teardown step; returns the function that runs it (once) and unregisters it. */
function onTeardown(stop: () => void): () => void {
  const id = nextStop++;
  const once = () => {
    if (!stops.delete(id)) return;
    try {
      stop();
    } catch {
      // teardown goes on with the other steps
    }
  };
  stops.set(id, once);
  return once;
}

/** Stops everything this process started and removes its directories (latest first). */
export function teardownAll(): void {
  for (const stop of [...stops.values()].reverse()) stop();
}

process.once('exit', teardownAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    teardownAll();
    process.exit(1);
  });
}
// A test worker whose vitest is gone (killed, timed out) stops too, rather than run on alone.
process.once('disconnect', () => {
  teardownAll();
  process.exit(1);
});

/**
 * A detached watcher per directory, for when this process dies without running any handler
 * (SIGKILL): once it is gone, the server in the directory is stopped and the directory removed.
 */
function reaper(dir: string) {
  const stopServer = asRoot ? `runuser -u postgres -- ${PG_BIN}/pg_ctl` : `${PG_BIN}/pg_ctl`;
  const script = [
    `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done`,
    `[ -f "${dir}/data/postmaster.pid" ] && ${stopServer} -D "${dir}/data" -m immediate stop`,
    `[ -f "${dir}/pgbouncer.pid" ] && kill "$(cat "${dir}/pgbouncer.pid")"`,
    `rm -rf "${dir}"`,
  ].join('; ');
  spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
}

/** A temporary directory the postgres OS user owns, removed at teardown. */
function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (asRoot) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
  }
  reaper(dir);
  onTeardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function pgUrl(port: number, database = 'postgres'): string {
  return `postgres://postgres@127.0.0.1:${port}/${database}`;
}

/** One statement on a server, on a connection of its own (harness bookkeeping, checks). */
export async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

export interface Cluster {
  port: number;
  dir: string;
  url(database?: string): string;
  /** pg_ctl stop; `immediate` is a crash as far as the data is concerned (no shutdown checkpoint). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Standby only: pg_ctl promote, resolved once it accepts writes. */
  promote(): Promise<void>;
  log(): string;
}

function pgCtl(dir: string, args: string[], timeoutMs = 60_000) {
  return run(join(PG_BIN, 'pg_ctl'), ['-D', join(dir, 'data'), ...args], timeoutMs);
}

/** What a server logs when the port it was given was taken meanwhile (PostgreSQL and PgBouncer alike). */
const PORT_TAKEN = /Address already in use/;

/**
 * Starts the cluster in `dir` on a port picked free. A port found free (freePort) may be bound by
 * another process before the server gets to bind it, and PostgreSQL cannot pick one itself (port 0):
 * when the server says the port is taken, another one is picked and the start tried again. The port
 * goes on the command line (-p), not in the configuration that pg_basebackup copies.
 */
async function startCluster(dir: string): Promise<Cluster> {
  const logFile = join(dir, 'postgres.log');
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  let port: number;
  for (;;) {
    port = await freePort();
    const before = log().length;
    try {
      await pgCtl(dir, ['-l', logFile, '-o', `-p ${port}`, '-w', '-t', '60', 'start']);
      break;
    } catch (err) {
      if (!PORT_TAKEN.test(log().slice(before))) throw err;
    }
  }
  let running = true;
  const stopNow = onTeardown(() => {
    if (running) spawnSync(...command(join(PG_BIN, 'pg_ctl'), ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
  });
  return {
    port,
    dir,
    url: (database) => pgUrl(port, database),
    async stop(mode = 'fast') {
      await pgCtl(dir, ['-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
      stopNow();
    },
    async promote() {
      await pgCtl(dir, ['-w', '-t', '60', 'promote']);
    },
    log,
  };
}

const COMMON_SETTINGS = (dir: string) => [
  `listen_addresses = '127.0.0.1'`,
  `unix_socket_directories = '${dir}'`,
  `max_connections = 200`,
  `max_wal_senders = 4`,
  `hot_standby = on`,
  `log_line_prefix = '%m [%p] %d '`,
];

/** A new primary cluster: initdb, trust on loopback (replication included), started. */
export async function startPrimary(): Promise<Cluster> {
  const dir = scratchDir('mc-scale-pg-');
  await run(join(PG_BIN, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  appendFileSync(join(dir, 'data', 'postgresql.conf'), ['', ...COMMON_SETTINGS(dir), ''].join('\n'));
  return startCluster(dir);
}

/**
 * A streaming hot standby of `primary` (pg_basebackup -R), named `name` in pg_stat_replication.
 * `synchronous`: the primary then waits for it to flush each commit (synchronous_standby_names,
 * synchronous_commit on) — resolved once the primary reports it as the synchronous standby.
 */
export async function startStandby(
  primary: Cluster,
  /** `via`: the port it reaches the primary on for streaming, when not the primary's own (a proxy the test cuts). */
  options: { name?: string; synchronous: boolean; via?: number },
): Promise<Cluster> {
  const name = options.name ?? 'standby1';
  const dir = scratchDir('mc-scale-standby-');
  await run(join(PG_BIN, 'pg_basebackup'), [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    join(dir, 'data'),
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
    '--no-sync',
  ]);
  appendFileSync(
    join(dir, 'data', 'postgresql.auto.conf'),
    [
      '',
      ...COMMON_SETTINGS(dir),
      `primary_conninfo = 'host=127.0.0.1 port=${options.via ?? primary.port} user=postgres application_name=${name}'`,
      // Once promoted it has no standby of its own: it must not wait for one.
      `synchronous_standby_names = ''`,
      '',
    ].join('\n'),
  );
  const standby = await startCluster(dir);
  const wanted = options.synchronous ? 'sync' : 'async';
  if (options.synchronous) {
    await query(primary.url(), `alter system set synchronous_standby_names = '${name}'`);
    await query(primary.url(), `alter system set synchronous_commit = on`);
    await query(primary.url(), 'select pg_reload_conf()');
  }
  await waitFor(async () => {
    const rows = await query<{ sync_state: string }>(
      primary.url(),
      `select sync_state from pg_stat_replication where application_name = $1 and state = 'streaming'`,
      [name],
    );
    return rows[0]?.sync_state === wanted;
  }, `standby ${name} streaming (${wanted})`);
  return standby;
}

/** Polls a condition the harness cannot be told about (server states), within a generous bound. */
export async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not reachable yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface Bouncer {
  port: number;
  /** A URL through PgBouncer to `database` (any name: the `*` entry forwards it to the target). */
  url(database: string): string;
  /** Rewrites the [databases] entry to point at `target` and RELOADs (the failover step). */
  repoint(target: Cluster): Promise<void>;
  log(): string;
  stop(): void;
}

/**
 * PgBouncer in transaction mode in front of `target`. The `*` entry forwards every database name to
 * the target, so each test file can have a database of its own (PgBouncer does not forward the
 * `options` startup parameter, so a schema chosen by search_path cannot be).
 */
export async function startPgBouncer(target: Pick<Cluster, 'port'>, settings: Record<string, string | number> = {}): Promise<Bouncer> {
  const dir = scratchDir('mc-scale-pgbouncer-');
  const ini = join(dir, 'pgbouncer.ini');
  const pidFile = join(dir, 'pgbouncer.pid');
  const logFile = join(dir, 'pgbouncer.log');
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  let port = 0;
  const admin = () => `postgres://postgres@127.0.0.1:${port}/pgbouncer`;
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  const write = (to: Pick<Cluster, 'port'>) =>
    writeFileSync(
      ini,
      [
        '[databases]',
        `* = host=127.0.0.1 port=${to.port}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'userlist.txt')}`,
        'admin_users = postgres',
        'pool_mode = transaction',
        'max_client_conn = 1000',
        'default_pool_size = 20',
        `logfile = ${logFile}`,
        `pidfile = ${pidFile}`,
        ...Object.entries(settings).map(([k, v]) => `${k} = ${v}`),
        '',
      ].join('\n'),
    );
  // Stopped by the pid it wrote (none yet, or none left by an attempt that could not listen: nothing to stop).
  const stop = onTeardown(() => {
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : 0;
    if (pid > 0) process.kill(pid, 'SIGTERM');
  });
  // As for PostgreSQL (startCluster): a port found free may be taken before PgBouncer binds it. It then
  // logs so and exits (after `pgbouncer -d` has returned 0): another port is picked and it starts again.
  for (;;) {
    port = await freePort();
    write(target);
    if (asRoot) spawnSync('chown', ['-R', 'postgres:postgres', dir]);
    const before = log().length;
    await run('pgbouncer', ['-d', ini]);
    let taken = false;
    await waitFor(async () => {
      taken = PORT_TAKEN.test(log().slice(before));
      return taken || (await query(admin(), 'SHOW VERSION')).length > 0;
    }, 'pgbouncer listening');
    if (!taken) break;
  }
  await waitFor(async () => existsSync(pidFile), 'pgbouncer pid file');
  return {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async repoint(to) {
      write(to);
      await query(admin(), 'RELOAD');
    },
    log,
    stop,
  };
}
