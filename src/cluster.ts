import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.js';
import { connect } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { bootstrapAdminToken } from './modules/tokens/tokens.repository.js';
import { printAdminToken } from './modules/tokens/admin-token.js';
import { createServer } from 'node:net';
import { isSqliteFile, startWalCheckpointer } from './db/wal-checkpoint.js';
import { databaseStartMessage, explained, listenStartMessage } from './start-errors.js';
import { listeningLine } from './start-line.js';

// One worker per core (WORKERS). Every worker is the whole service (buildApp, its own database
// connection or pool) and they share one listening socket (node:cluster hands connections out in
// turn). What they share otherwise lives in the database, so it stays exact across workers as it is
// across instances: a write by one is committed before it is acknowledged, and every cache of every
// worker is stamped with the written table's version (db/table-stamps.ts), which that commit moved.
// SQLite: one file in WAL mode, readers never wait; writers take turns, a worker whose write finds the
// lock taken waiting for it off its event loop (db/write-lock.ts), each worker grouping its own
// concurrent writes into one commit. The primary only starts, restarts and stops
// workers: it migrates the database and creates the bootstrap admin token once, before the first
// fork, so workers never race to do either. On SQLite it also checkpoints the WAL, so no worker does
// inside a request's commit (db/wal-checkpoint.ts).

/** Restarting a worker that keeps dying straight away is not recovery: give up after this many in a row. */
const MAX_QUICK_DEATHS = 5;
const QUICK_MS = 5_000;

/**
 * The size of each of a worker's two young-generation semi-spaces, in MB (V8's default on 64-bit is
 * 16). Under the distinct read mix on a million users, 8 cost no throughput (1,397 / 1,339 / 1,467
 * against 1,335 / 1,317 / 1,442 req/s, three alternating rounds of 6,000 distinct reads, each run its
 * own) and lowered a worker's peak RSS from 147-152 MB to 133-140 MB (docs/scaling.md).
 */
export const WORKER_SEMI_SPACE_MB = 8;

/**
 * How much V8 lets a worker's old generation grow past what its last full collection left, in percent
 * (V8's --heap-growing-percent; at least 8 MB more either way). By default V8 picks the factor from its
 * collection and allocation speeds, and under the distinct mix on a million users it let the old
 * generation reach 32-37 MB over 18-22 MB live: the largest share of what a worker's peak adds to its
 * memory at ready (issue 37's 200 MB a worker; docs/query-conventions.md, "Memory").
 */
export const WORKER_HEAP_GROWING_PERCENT = 10;

/** The workers' node flags: the primary's, and each of the sizes above unless they (or NODE_OPTIONS, which allows only the semi-space's) set it. */
export function workerExecArgv(execArgv: readonly string[], nodeOptions = ''): string[] {
  const given = (flag: RegExp) => [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => flag.test(arg));
  const out = [...execArgv];
  if (!given(/^--max[-_]semi[-_]space[-_]size(=|$)/)) out.push(`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`);
  if (!given(/^--heap[-_]growing[-_]percent(=|$)/)) out.push(`--heap-growing-percent=${WORKER_HEAP_GROWING_PERCENT}`);
  return out;
}

/**
 * How many malloc arenas a worker's C allocator (glibc) keeps. By default glibc gives each thread that
 * allocates (V8's GC helpers, libuv's pool) an arena of its own, up to eight per core, and each keeps
 * the memory it once held. With 2, under the distinct read mix on a million users, a worker's peak RSS
 * went from 149-158 MB to 141-146 MB on SQLite and from 158-159 to 148-149 MB on PostgreSQL, with no
 * throughput lost (3,604 / 3,836 / 3,749 against 3,718 / 3,766 / 3,586 req/s on SQLite, 1,500 / 1,433
 * against 1,484 / 1,431 on PostgreSQL; wrk, 32 connections, alternating rounds of distinct reads, each
 * run its own). glibc reads it when a process starts, so a single process (WORKERS=1) takes it from
 * its own environment (docs/scaling.md).
 */
export const WORKER_MALLOC_ARENAS = 2;

/** What a worker's environment adds to the primary's (cluster.fork): MALLOC_ARENA_MAX, unless the primary's sets one. */
export function workerEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return env.MALLOC_ARENA_MAX ? {} : { MALLOC_ARENA_MAX: String(WORKER_MALLOC_ARENAS) };
}

/** Binds HOST:PORT once and lets go: a HOST or PORT the workers could not listen on stops the start here, in one line. */
async function checkListen(config: Config): Promise<void> {
  const probe = createServer();
  await explained(
    () =>
      new Promise<void>((resolve, reject) => {
        probe.once('error', reject);
        probe.listen({ host: config.host, port: config.port }, () => probe.close(() => resolve()));
      }),
    (err) => listenStartMessage(err, config),
  );
}

async function prepareDatabase(config: Config): Promise<void> {
  const connection = await explained(
    () => connect(config),
    (err) => databaseStartMessage(err, config.databaseUrl, config.pgConnectTimeoutMs),
  );
  try {
    await explained(
      () => migrateToLatest(connection.db),
      (err) => databaseStartMessage(err, config.databaseUrl, config.pgConnectTimeoutMs),
    );
    // After the listen check: a start that cannot listen creates no token nobody sees.
    printAdminToken(await bootstrapAdminToken(connection.db, config.adminToken));
  } finally {
    await connection.close();
  }
}

/** Starts the service: in this process (WORKERS=1), or as the primary of `config.workers` workers. */
export async function startService(config: Config): Promise<void> {
  if (config.workers <= 1 || cluster.isWorker) {
    // Loaded here, not at the top: a primary only migrates and forks, and the server's modules (Fastify,
    // the routes, the docs plugins) were about half of its time before the first fork (scripts/bundle.mjs).
    const { startServer } = await import('./server.js');
    await startServer(config, { bootstrap: !cluster.isWorker, worker: cluster.isWorker });
    return;
  }
  await checkListen(config);
  await prepareDatabase(config);
  const checkpointer = isSqliteFile(config.databaseUrl) ? startWalCheckpointer(config) : undefined;

  let stopping = false;
  let quickDeaths = 0;
  const started = new Map<Worker, number>();
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv, process.env.NODE_OPTIONS) });
  const added = workerEnv(process.env);
  const fork = () => started.set(cluster.fork(added), Date.now());
  // The first worker starts alone and the others once it listens: started together, they took the
  // same cores at once and the first answered later than one alone would.
  fork();
  cluster.once('listening', () => {
    for (let i = 1; i < config.workers; i++) if (!stopping) fork();
  });
  // One line for the service, once every worker listens (not one per worker), saying how many there are.
  let listening = 0;
  const onListening = (_worker: Worker, address: { address: string | null; port: number }) => {
    if (++listening < config.workers) return;
    cluster.off('listening', onListening);
    process.stderr.write(listeningLine({ address: address.address ?? config.host, port: address.port, family: '' }, config));
  };
  cluster.on('listening', onListening);

  cluster.on('exit', (worker, code, signal) => {
    const since = started.get(worker) ?? 0;
    started.delete(worker);
    if (stopping) {
      if (started.size === 0) {
        checkpointer?.stop();
        process.exit(process.exitCode ?? 0);
      }
      return;
    }
    quickDeaths = Date.now() - since < QUICK_MS ? quickDeaths + 1 : 0;
    process.stderr.write(
      `music-catalogue: worker ${worker.process.pid} exited (${signal ?? code}); ${quickDeaths >= MAX_QUICK_DEATHS ? 'giving up' : 'starting another'}\n`,
    );
    if (quickDeaths >= MAX_QUICK_DEATHS) {
      stopping = true;
      for (const w of started.keys()) w.process.kill('SIGTERM');
      process.exitCode = 1;
      if (started.size === 0) {
        checkpointer?.stop();
        process.exit(1);
      }
      return;
    }
    fork();
  });

  const stop = () => {
    if (stopping) return;
    stopping = true;
    // Each worker drains its in-flight requests and closes its database (server.ts), then exits.
    for (const w of started.keys()) w.process.kill('SIGTERM');
    const timer = setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 2_000);
    timer.unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
