import { CompiledQuery, type Kysely } from 'kysely';
import { countBatch } from './write-batches.js';

// Group commit for hot single-row INSERTs on PostgreSQL. Each write committed alone is a transaction
// of its own: a WAL flush, and a turn on the written table's version row (db/table-stamps.ts), which
// every writer of that table updates, so concurrent writes of one table wait for one another's
// commits anyway. Here the writes that arrive while a batch is being written queue up, and the next
// batch writes all of them (up to `maxRows`) as one multi-row INSERT ... RETURNING: one statement,
// one transaction, one commit. Every caller is answered only after that statement committed, so an
// acknowledged write is as durable as one committed alone.
//
// Rows are matched to their writes by ascending id: an identity column numbers the rows of one
// statement in the order of its VALUES (each later row draws the sequence later). A batch whose
// statement fails (one write's foreign key, say) is rolled back whole, and its writes then run one
// by one, so only the failing one fails.

interface Pending<R> {
  params: readonly unknown[];
  resolve: (rows: R[]) => void;
  reject: (error: unknown) => void;
}

/** The batches of one INSERT on one database (a pool, never a transaction). */
export class InsertBatcher<R> {
  private queue: Pending<R>[] = [];
  private running = false;

  /**
   * `rowsSql(n)`: the INSERT for `n` rows, its parameters each write's in turn, RETURNING the `id`.
   * `alone(params)`: one write on its own (a lone write, and the fallback for a failed batch).
   */
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly maxRows: number,
    private readonly rowsSql: (n: number) => string,
    private readonly alone: (params: readonly unknown[]) => Promise<R[]>,
  ) {}

  run(params: readonly unknown[]): Promise<R[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ params, resolve, reject });
      if (!this.running) void this.loop();
    });
  }

  private async loop(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) await this.write(this.queue.splice(0, this.maxRows));
    this.running = false;
  }

  private async write(items: Pending<R>[]): Promise<void> {
    if (items.length === 1) {
      const item = items[0]!;
      await this.alone(item.params).then((rows) => (countBatch(1), item.resolve(rows)), item.reject);
      return;
    }
    let rows: (R & { id: number | string })[];
    try {
      const text = this.rowsSql(items.length);
      rows = (
        await this.db.executeQuery(
          CompiledQuery.raw(
            text,
            items.flatMap((item) => [...item.params]),
          ),
        )
      ).rows as (R & { id: number | string })[];
    } catch {
      await Promise.all(items.map((item) => this.alone(item.params).then(item.resolve, item.reject)));
      return;
    }
    if (rows.length !== items.length) {
      const error = new Error(`a multi-row write returned ${rows.length} rows for ${items.length} writes`);
      for (const item of items) item.reject(error);
      return;
    }
    rows.sort((a, b) => Number(a.id) - Number(b.id));
    countBatch(items.length);
    items.forEach((item, i) => item.resolve([rows[i]!]));
  }
}
