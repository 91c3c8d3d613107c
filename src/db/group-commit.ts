import type SQLite from 'better-sqlite3';
import { countBatch } from './write-batches.js';
import { writeLock, type WriteLock } from './write-lock.js';

// Group commit for hot single-statement writes on SQLite. Every commit in WAL mode appends the pages
// it changed to the log, so a commit costs far more than the INSERT itself. Writes that arrive in the
// same turn of the event loop (concurrent requests) run in one transaction. Every caller is answered
// only after the transaction has committed, so an acknowledged write survives a crash of the process
// exactly as a write committed alone does.
//
// Writes of the same INSERT that can take several rows (`many`) run as one multi-row statement per
// batch (at most MAX_ROWS rows each). Inside a transaction, a statement that fires triggers opens a
// statement savepoint, which the search index (an FTS5 table filled by a trigger) pays for dearly:
// measured on a bare table with that trigger, 32 single-row INSERTs in one transaction cost about 27 µs
// a row, one 32-row INSERT about 9 µs (no trigger: 3.5 and 2 µs); on the 1M-user bench database,
// 65-70 µs against 25-40 µs a song.
//
// One write failing (a foreign key, say) fails alone: SQLite rolls back just the failing statement
// and the transaction goes on. A multi-row statement that fails is rolled back whole and its writes
// then run one by one, so the others still commit. An error that ends the transaction itself (disk
// full, I/O) fails the whole batch, none of which was written.

/** Rows in one multi-row statement: bounds the statements prepared per write (one per size). */
export const MAX_ROWS = 64;

/** Runs the same write for `n` rows: its parameters are each write's in turn, its rows one per write. */
export type ManyRows = (n: number) => { stmt: SQLite.Statement; order: (rows: unknown[]) => unknown[] };

interface Pending {
  stmt: SQLite.Statement;
  params: unknown[];
  /** The multi-row form of `stmt`, when it has one; writes of the same `stmt` share a statement. */
  many: ManyRows | undefined;
  resolve: (row: unknown) => void;
  reject: (error: unknown) => void;
  /** How to run it when a transaction is open on the connection (its own, through Kysely). */
  alone(): Promise<unknown>;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly handle: SQLite.Database) {}

  run(item: Pending): void {
    this.queue.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** One write in the open transaction; an error that ended the transaction ends the batch. */
  private one(item: Pending): Outcome {
    try {
      return { ok: true, value: item.stmt.reader ? item.stmt.get(item.params) : item.stmt.run(item.params) };
    } catch (error) {
      if (!this.handle.inTransaction) throw error;
      return { ok: false, error };
    }
  }

  /** Writes of one multi-row statement, one outcome each, in their order. */
  private together(items: Pending[], many: ManyRows): Outcome[] {
    const { stmt, order } = many(items.length);
    let rows: unknown[];
    try {
      rows = order(stmt.all(items.flatMap((item) => item.params)));
    } catch (error) {
      if (!this.handle.inTransaction) throw error;
      return items.map((item) => this.one(item)); // rolled back whole: find the one that fails
    }
    if (rows.length !== items.length) throw new Error(`a multi-row write returned ${rows.length} rows for ${items.length} writes`);
    return rows.map((value) => ({ ok: true, value }));
  }

  /** The writes queued so far, and the next one schedules a flush again. */
  private take(): Pending[] {
    this.scheduled = false;
    const items = this.queue;
    this.queue = [];
    return items;
  }

  private flush(): void {
    if (this.handle.inTransaction) {
      // A transaction that spans awaits holds the connection: joining it would commit (or roll back)
      // these writes with it. Run each on its own, queued behind it.
      for (const item of this.take()) item.alone().then(item.resolve, item.reject);
      return;
    }
    // The write lock without sleeping on the event loop (db/write-lock.ts): while another connection
    // holds it, the writes that arrive meanwhile join this batch, which takes them all once it has it.
    const lock = writeLock(this.handle);
    if (lock.beginNow()) return this.commit(lock, this.take());
    lock
      .begin(() => this.commit(lock, this.take()))
      .catch((error: unknown) => {
        for (const item of this.take()) item.reject(error); // as a BEGIN that timed out: nothing was written
      });
  }

  /** The batch in the write transaction `lock` has begun, committed; then every caller answered. */
  private commit(lock: WriteLock, items: Pending[]): void {
    const outcomes: Outcome[] = [];
    try {
      for (let i = 0; i < items.length;) {
        const { stmt, many } = items[i]!;
        let end = i + 1;
        while (many && end < items.length && end - i < MAX_ROWS && items[end]!.stmt === stmt && items[end]!.many) end++;
        if (end - i === 1) outcomes.push(this.one(items[i]!));
        else outcomes.push(...this.together(items.slice(i, end), many!));
        i = end;
      }
    } catch (error) {
      lock.rollback();
      for (const item of items) item.reject(error); // the transaction failed: nothing was written
      return;
    }
    try {
      lock.commit();
    } catch (error) {
      for (const item of items) item.reject(error);
      return;
    }
    countBatch(outcomes.filter((o) => o.ok).length);
    items.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}

const groups = new WeakMap<SQLite.Database, GroupCommit>();

/**
 * Runs `stmt` with `params` in the connection's next group commit; the row it returns (RETURNING) or
 * its run info. `many`, when given, is the same write for several rows (see ManyRows).
 */
export function groupCommit(
  handle: SQLite.Database,
  stmt: SQLite.Statement,
  params: unknown[],
  alone: () => Promise<unknown>,
  many?: ManyRows,
): Promise<unknown> {
  let group = groups.get(handle);
  if (!group) groups.set(handle, (group = new GroupCommit(handle)));
  return new Promise((resolve, reject) => group.run({ stmt, params, many, resolve, reject, alone }));
}
