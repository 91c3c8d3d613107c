import type SQLite from 'better-sqlite3';

// Group commit for hot single-statement writes on SQLite. Every commit in WAL mode appends the pages
// it changed to the log (and the search index adds a segment per commit), so a commit costs far more
// than the INSERT itself. Writes that arrive in the same turn of the event loop (concurrent requests)
// run in one transaction, each in its own savepoint: one write failing (a foreign key, say) rolls
// back only itself. Every caller is answered only after the transaction has committed, so an
// acknowledged write survives a crash of the process exactly as a write committed alone does.

interface Pending {
  stmt: SQLite.Statement;
  params: unknown[];
  resolve(row: unknown): void;
  reject(error: unknown): void;
  /** How to run it when a transaction is open on the connection (its own, through Kysely). */
  alone(): Promise<unknown>;
}

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

  private flush(): void {
    this.scheduled = false;
    const items = this.queue;
    this.queue = [];
    if (this.handle.inTransaction) {
      // A transaction that spans awaits holds the connection: joining it would commit (or roll back)
      // these writes with it. Run each on its own, queued behind it.
      for (const item of items) item.alone().then(item.resolve, item.reject);
      return;
    }
    const results: { ok: boolean; value: unknown }[] = [];
    const savepoint = this.handle.transaction((item: Pending) => (item.stmt.reader ? item.stmt.get(item.params) : item.stmt.run(item.params)));
    const batch = this.handle.transaction(() => {
      for (const item of items) {
        try {
          results.push({ ok: true, value: savepoint(item) });
        } catch (error) {
          results.push({ ok: false, value: error });
        }
      }
    });
    try {
      batch.immediate();
    } catch (error) {
      for (const item of items) item.reject(error); // the commit itself failed: nothing was written
      return;
    }
    items.forEach((item, i) => (results[i]!.ok ? item.resolve(results[i]!.value) : item.reject(results[i]!.value)));
  }
}

const groups = new WeakMap<SQLite.Database, GroupCommit>();

/** Runs `stmt` with `params` in the connection's next group commit; the row it returns (RETURNING) or its run info. */
export function groupCommit(handle: SQLite.Database, stmt: SQLite.Statement, params: unknown[], alone: () => Promise<unknown>): Promise<unknown> {
  let group = groups.get(handle);
  if (!group) groups.set(handle, (group = new GroupCommit(handle)));
  return new Promise((resolve, reject) => group.run({ stmt, params, resolve, reject, alone }));
}
