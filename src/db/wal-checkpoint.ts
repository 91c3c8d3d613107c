import type SQLite from 'better-sqlite3';
import type { Config } from '../config.js';
import { openSqlite } from './connect.js';

// SQLite's WAL checkpoint, off the request path. By default (wal_autocheckpoint = 1000 pages) the
// connection whose commit takes the WAL past 1000 pages copies the WAL into the database file inside
// that commit, on the event loop of the worker serving the request: measured over 3,000 UPDATEs, a
// write's mean was 440-720 µs and its p99 12-19 ms, against 156-178 µs and 0.3-0.4 ms with no
// autocheckpoint (docs/scaling.md). Raising the threshold only makes fewer, longer stalls.
//
// So a connection that serves no request checkpoints instead: the cluster primary's (cluster.ts), or
// in a single process (WORKERS=1, tests) a connection of its own on a timer, which is as near as one
// event loop gets. It runs a PASSIVE checkpoint every CHECKPOINT_EVERY_MS, only when another
// connection has committed since its last complete run (PRAGMA data_version: a read of the shared
// WAL index, no I/O). PASSIVE never waits for readers or writers: it copies what it can and the
// next run does the rest. Serving connections keep an autocheckpoint, at SERVING_AUTOCHECKPOINT_PAGES,
// as a safety net only: should the checkpointer stop, the WAL stays bounded.
//
// Durability is untouched: in WAL mode a commit is durable once it is in the WAL (synchronous, set in
// connect.ts as before); a checkpoint only copies committed pages into the database file.

/** How often the checkpointer looks at the WAL. */
export const CHECKPOINT_EVERY_MS = 200;
/** Serving connections' wal_autocheckpoint (pages): a bound should the checkpointer stop, 10x SQLite's default. */
export const SERVING_AUTOCHECKPOINT_PAGES = 10_000;

/** One checkpoint, as PRAGMA wal_checkpoint reports it: frames in the WAL (`log`) and copied (`checkpointed`). */
export interface CheckpointRun {
  busy: number;
  log: number;
  checkpointed: number;
}

export interface WalCheckpointer {
  /** Checkpoints now (PASSIVE) and tells the listeners. */
  run(): CheckpointRun | undefined;
  /** Called after every checkpoint the checkpointer runs; returns the unsubscribe. */
  onRun(listener: (run: CheckpointRun) => void): () => void;
  /** Stops the timer and closes the checkpointer's connection (idempotent). */
  stop(): void;
}

/** Whether `databaseUrl` is a SQLite file (an in-memory database has no WAL and one connection). */
export function isSqliteFile(databaseUrl: string): boolean {
  return databaseUrl.startsWith('sqlite:') && databaseUrl !== 'sqlite::memory:';
}

/** The pragma a serving connection gets while a checkpointer runs (the safety net above). */
export function leaveCheckpointsToCheckpointer(handle: SQLite.Database): void {
  handle.pragma(`wal_autocheckpoint = ${SERVING_AUTOCHECKPOINT_PAGES}`);
}

/** Opens a connection of its own on the database and checkpoints on a timer that keeps no process alive. */
export function startWalCheckpointer(config: Pick<Config, 'databaseUrl' | 'sqliteSynchronous'>, everyMs = CHECKPOINT_EVERY_MS): WalCheckpointer {
  const handle = openSqlite({ ...config, sqliteCreateDirectory: false });
  // It writes nothing itself; its only checkpoints are the ones it runs.
  handle.pragma('wal_autocheckpoint = 0');
  const listeners = new Set<(run: CheckpointRun) => void>();
  let seen: unknown;
  let complete = false;
  let stopped = false;

  const run = (): CheckpointRun | undefined => {
    if (stopped) return undefined;
    try {
      const row = handle.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
      const result = { busy: row[0]!.busy, log: row[0]!.log, checkpointed: row[0]!.checkpointed };
      complete = result.busy === 0 && result.checkpointed === result.log;
      for (const listener of listeners) listener(result);
      return result;
    } catch {
      // The next tick tries again; the serving connections' autocheckpoint bounds the WAL meanwhile.
      complete = false;
      return undefined;
    }
  };

  const tick = () => {
    let version: unknown;
    try {
      version = handle.pragma('data_version', { simple: true });
    } catch {
      return;
    }
    if (complete && version === seen) return;
    seen = version;
    run();
  };

  const timer = setInterval(tick, everyMs);
  timer.unref();
  return {
    run,
    onRun(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      listeners.clear();
      handle.close();
    },
  };
}
