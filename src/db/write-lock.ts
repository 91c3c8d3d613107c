import { EventEmitter } from 'node:events';
import type SQLite from 'better-sqlite3';

// SQLite's write lock taken without sleeping on the event loop. One database file has one writer at a
// time: in WAL mode a write transaction (BEGIN IMMEDIATE, or an autocommit INSERT / UPDATE / DELETE)
// takes the file's write lock, and a connection that finds it taken (another worker's commit, a CLI
// import) waits `busy_timeout`. better-sqlite3 is synchronous, so that wait is a sleep inside the call,
// on the event loop: every read queued on that worker waits with it (bench/README.md, "Writers take
// turns").
//
// So a write here first tries the lock with busy_timeout 0 and, when it is taken, tries again from a
// timer, the event loop free meanwhile: the first retry on the next turn (setImmediate), then after
// 1, 2, 4 ms ... at most MAX_BACKOFF_MS apart (another worker holds it for a commit, well under a ms).
// Each connection's writers take their turn in the order they asked (a queue per connection: only one
// transaction can be open on it), and a writer's wait for the file's lock is bounded as busy_timeout
// bounded it (the connection's busy_timeout, 5 s: connect.ts; counted from its turn, as busy_timeout
// counted from the statement), then it fails with SQLite's own SQLITE_BUSY error, as before (the error handler answers 503 with
// Retry-After: errors/driver.ts). Everything else keeps busy_timeout (connect.ts): reads in WAL mode
// never wait for the writer.
//
// The writers that take it: the group commit (db/group-commit.ts), and every write through Kysely
// (db/connect.ts: an autocommit INSERT / UPDATE / DELETE runs in a transaction of its own begun here, a
// Kysely transaction begins with BEGIN IMMEDIATE here). What a transaction commits, and when the writer
// is answered, are as before.

/** The longest pause between two tries. */
export const MAX_BACKOFF_MS = 8;

export interface WriteLock {
  /**
   * Opens this connection's write transaction (BEGIN IMMEDIATE) once the lock is free, then runs
   * `then` at once (no other code runs in between) and resolves with what it returns; the caller runs
   * its statements and calls `commit` or `rollback`. Rejects with SQLite's SQLITE_BUSY error once
   * another connection has held the lock for the connection's busy_timeout.
   */
  begin<T>(then: () => T): Promise<T>;
  /** BEGIN IMMEDIATE now if nobody on this connection waits and the file's lock is free; else false. */
  beginNow(): boolean;
  /** COMMIT, and the connection's next writer goes; if COMMIT fails, ROLLBACK and the error. */
  commit(): void;
  /** ROLLBACK (unless an error ended the transaction already), and the connection's next writer goes. */
  rollback(): void;
}

/** 'waiting': a writer found the lock taken (by this connection's other writers or another connection) and waits off the event loop. */
export const writeLockEvents = new EventEmitter();

const isBusy = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
};

class Lock implements WriteLock {
  private held = false;
  private readonly waiting: Array<() => void> = [];
  private readonly beginImmediate: SQLite.Statement;
  private readonly commitStmt: SQLite.Statement;
  private readonly rollbackStmt: SQLite.Statement;

  constructor(private readonly handle: SQLite.Database) {
    this.beginImmediate = handle.prepare('BEGIN IMMEDIATE');
    this.commitStmt = handle.prepare('COMMIT');
    this.rollbackStmt = handle.prepare('ROLLBACK');
  }

  /**
   * Sets the connection's busy_timeout. Through handle.pragma, which prepares it each time: SQLite
   * applies (and reads) busy_timeout when the PRAGMA is prepared, not when a prepared one is run again.
   */
  private busyTimeout(ms?: number): number {
    return this.handle.pragma(ms === undefined ? 'busy_timeout' : `busy_timeout = ${Math.trunc(ms)}`, { simple: true }) as number;
  }

  /**
   * One try at BEGIN IMMEDIATE that never sleeps: undefined once begun, else SQLite's SQLITE_BUSY
   * error. `wait` gets the connection's busy_timeout (ms), which bounds the wait as it did the sleep.
   */
  private tryBegin(wait?: { ms: number }): Error | undefined {
    const ms = this.busyTimeout();
    if (wait) wait.ms = ms;
    this.busyTimeout(0);
    try {
      this.beginImmediate.run();
      return undefined;
    } catch (error) {
      if (isBusy(error)) return error as Error;
      throw error;
    } finally {
      this.busyTimeout(ms);
    }
  }

  beginNow(): boolean {
    if (this.held || this.tryBegin() !== undefined) return false;
    this.held = true;
    return true;
  }

  async begin<T>(then: () => T): Promise<T> {
    writeLockEvents.emit('waiting');
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    // This connection's turn: handed over by release (`held` stays true) or nobody's.
    this.held = true;
    try {
      const wait = { ms: 0 };
      let busy = this.tryBegin(wait);
      const deadline = Date.now() + wait.ms;
      for (let pause = 0; busy !== undefined; pause = Math.min(MAX_BACKOFF_MS, Math.max(1, pause * 2))) {
        const left = deadline - Date.now();
        if (left <= 0) throw busy;
        await new Promise((resolve) => (pause === 0 ? setImmediate(resolve) : setTimeout(resolve, Math.min(pause, left))));
        busy = this.tryBegin();
      }
    } catch (error) {
      this.release();
      throw error;
    }
    return then();
  }

  commit(): void {
    try {
      this.commitStmt.run();
    } catch (error) {
      this.rollback();
      throw error;
    }
    this.release();
  }

  rollback(): void {
    try {
      if (this.handle.inTransaction) this.rollbackStmt.run();
    } finally {
      this.release();
    }
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

const locks = new WeakMap<SQLite.Database, WriteLock>();

/** The connection's write lock (one per better-sqlite3 handle). */
export function writeLock(handle: SQLite.Database): WriteLock {
  let lock = locks.get(handle);
  if (!lock) locks.set(handle, (lock = new Lock(handle)));
  return lock;
}
