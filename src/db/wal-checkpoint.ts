import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import type { Config } from '../config.js';
import { sqlitePath } from './connect.js';

// SQLite's WAL checkpoint, off the request path. By default (wal_autocheckpoint = 1000 pages) the
// connection whose commit takes the WAL past 1000 pages copies the WAL into the database file inside
// that commit, on the event loop of the worker serving the request: measured over 3,000 UPDATEs, a
// write's mean was 440-720 µs and its p99 12-19 ms, against 156-178 µs and 0.3-0.4 ms with no
// autocheckpoint (docs/scaling.md). Raising the threshold only makes fewer, longer stalls.
//
// So a connection that serves no request checkpoints instead, in a thread of its own (a worker_thread:
// its own event loop), started by the cluster primary (cluster.ts) or, in a single process (WORKERS=1,
// tests), by the process itself. On the serving event loop, as it first ran with WORKERS=1, a PASSIVE
// checkpoint under 90 PATCHes a second took 14 ms every 200 ms on average and up to 759 ms at once
// (its fsync of the database file), during which no request was answered. It runs a PASSIVE checkpoint every CHECKPOINT_EVERY_MS, only when another
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
  /** Called (on this thread's event loop) after every checkpoint the checkpointer's thread runs; returns the unsubscribe. */
  onRun(listener: (run: CheckpointRun) => void): () => void;
  /**
   * The checkpoints run so far, counted by the checkpointer's thread itself (Atomics.add, then
   * Atomics.notify on index 0): readable, and awaitable with Atomics.wait, while this thread is busy.
   */
  readonly runs: Int32Array;
  /** Stops the thread: it closes its connection and exits, then this resolves (idempotent). */
  stop(): Promise<void>;
}

/** Whether `databaseUrl` is a SQLite file (an in-memory database has no WAL and one connection). */
export function isSqliteFile(databaseUrl: string): boolean {
  return databaseUrl.startsWith('sqlite:') && databaseUrl !== 'sqlite::memory:';
}

/** The pragma a serving connection gets while a checkpointer runs (the safety net above). */
export function leaveCheckpointsToCheckpointer(handle: SQLite.Database): void {
  handle.pragma(`wal_autocheckpoint = ${SERVING_AUTOCHECKPOINT_PAGES}`);
}

/** What the checkpointer's thread is given. */
interface ThreadData {
  /** The better-sqlite3 module, resolved by this process (the thread runs from source text, with no module of its own). */
  driver: string;
  path: string;
  synchronous: string;
  everyMs: number;
  runs: SharedArrayBuffer;
}

/** A message from the checkpointer's thread: a checkpoint it ran, or why it could not open its connection. */
type ThreadMessage = { run: CheckpointRun } | { failed: string };

/**
 * The checkpointer's thread, run from its own source text (so nothing outside it may be named here):
 * a connection of its own, a PASSIVE checkpoint every `everyMs` when another connection has committed
 * since its last complete run (PRAGMA data_version: a read of the shared WAL index, no I/O).
 */
function checkpointerThread(require: NodeJS.Require): void {
  const threads = require('node:worker_threads') as typeof import('node:worker_threads');
  const data = threads.workerData as ThreadData;
  const Database = require(data.driver) as typeof SQLite;
  const port = threads.parentPort!;
  const runs = new Int32Array(data.runs);
  let handle: SQLite.Database;
  try {
    handle = new Database(data.path, { fileMustExist: true });
    handle.pragma('journal_mode = WAL');
    // The checkpoint's own writes to the database file are synced as the serving connections' commits are.
    handle.pragma(`synchronous = ${data.synchronous}`);
    // It writes nothing itself; its only checkpoints are the ones it runs.
    handle.pragma('wal_autocheckpoint = 0');
  } catch (err) {
    port.postMessage({ failed: String(err) } satisfies ThreadMessage);
    return;
  }
  let seen: unknown;
  let complete = false;
  const tick = () => {
    let version: unknown;
    try {
      version = handle.pragma('data_version', { simple: true });
    } catch {
      return;
    }
    if (complete && version === seen) return;
    seen = version;
    try {
      const row = handle.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
      const run = { busy: row[0]!.busy, log: row[0]!.log, checkpointed: row[0]!.checkpointed };
      complete = run.busy === 0 && run.checkpointed === run.log;
      Atomics.add(runs, 0, 1);
      Atomics.notify(runs, 0);
      port.postMessage({ run } satisfies ThreadMessage);
    } catch {
      // The next tick tries again; the serving connections' autocheckpoint bounds the WAL meanwhile.
      complete = false;
    }
  };
  const timer = setInterval(tick, data.everyMs);
  port.on('message', (message) => {
    if (message !== 'stop') return;
    clearInterval(timer);
    handle.close();
    port.close();
  });
}

/**
 * Starts the checkpointer's thread on the database (which must exist: the serving connection or the
 * migration made it). The thread keeps no process alive. `onFailed`: told once if the thread cannot
 * open its connection (the serving connections' autocheckpoint then bounds the WAL).
 */
export function startWalCheckpointer(
  config: Pick<Config, 'databaseUrl' | 'sqliteSynchronous'>,
  everyMs = CHECKPOINT_EVERY_MS,
  onFailed: (reason: string) => void = () => {},
): WalCheckpointer {
  const data: ThreadData = {
    driver: createRequire(import.meta.url).resolve('better-sqlite3'),
    path: sqlitePath(config.databaseUrl),
    synchronous: config.sqliteSynchronous.toUpperCase(),
    everyMs,
    runs: new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT),
  };
  const thread = new Worker(`(${checkpointerThread.toString()})(require)`, { eval: true, workerData: data });
  thread.unref();
  const listeners = new Set<(run: CheckpointRun) => void>();
  thread.on('message', (message: ThreadMessage) => {
    if ('failed' in message) onFailed(message.failed);
    else for (const listener of listeners) listener(message.run);
  });
  // A thread that threw (it should not: each step catches) stops checkpointing, as a failed open does.
  thread.on('error', (err) => onFailed(String(err)));
  const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
  let stopping: Promise<void> | undefined;
  return {
    runs: new Int32Array(data.runs),
    onRun(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop() {
      if (!stopping) {
        listeners.clear();
        // Held now, or a process with nothing else to do would end before the thread says it exited.
        thread.ref();
        thread.postMessage('stop');
        stopping = exited;
      }
      return stopping;
    },
  };
}
