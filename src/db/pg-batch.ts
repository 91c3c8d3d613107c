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

// Group commit for single-row UPDATEs by id on PostgreSQL (issue 32): concurrent updates of one table
// that set the same columns run as one UPDATE ... FROM json_populate_recordset(...): one round trip,
// one run of each statement trigger (events, table version, summaries) and one commit for the batch
// instead of one each per write. The values travel as one JSON parameter, each row an object keyed by
// column name (bound by name, never by position), typed by the table's own row type.
// - A batch holds each id at most once: a second update of the same row waits for the next batch
//   (one statement updates a row once).
// - Unrelated writes never wait on each other: the batch updates only the rows it can lock at once
//   (FOR UPDATE SKIP LOCKED). A row another transaction holds (or that does not exist) is left out,
//   and its update runs on its own, outside the batches: it waits for that transaction alone, and
//   answers as an update alone does (404 when there is no such row). The next batches go on meanwhile.
// - A batch whose statement fails (a unique violation, say) is rolled back whole and its updates run
//   one by one, so only the failing one fails.

interface PendingUpdate<R> {
  id: number;
  values: Record<string, unknown>;
  /** The columns set, in a fixed order: which batch it can join. */
  columns: string;
  resolve: (row: R | undefined) => void;
  reject: (error: unknown) => void;
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The batches of updates by id of one table on one database (a pool, never a transaction). */
export class UpdateBatcher<R extends { id: number }> {
  private queue: PendingUpdate<R>[] = [];
  private running = false;
  private readonly texts = new Map<string, string>();

  /**
   * `columns`: the columns an update may set (any other makes the write run alone); `returning`: the
   * columns each caller gets back (with the id); `alone(id, values)`: one update on its own (a lone
   * write, and the fallback for a failed batch).
   */
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly table: string,
    private readonly columns: ReadonlySet<string>,
    private readonly returning: readonly string[],
    private readonly maxRows: number,
    private readonly alone: (id: number, values: Record<string, unknown>) => Promise<R | undefined>,
  ) {}

  /** Sets `values` (column -> value) on the row `id`, bumping its version; the row as updated, or undefined. */
  run(id: number, values: Record<string, unknown>): Promise<R | undefined> {
    const names = Object.keys(values).sort();
    if (names.length === 0 || !names.every((name) => this.columns.has(name))) return this.alone(id, values);
    return new Promise((resolve, reject) => {
      this.queue.push({ id, values, columns: names.join(','), resolve, reject });
      if (!this.running) void this.loop();
    });
  }

  private async loop(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) await this.write(this.nextBatch());
    this.running = false;
  }

  /** The oldest update and those after it that set the same columns of other rows, up to maxRows. */
  private nextBatch(): PendingUpdate<R>[] {
    const columns = this.queue[0]!.columns;
    const batch: PendingUpdate<R>[] = [];
    const ids = new Set<number>();
    const rest: PendingUpdate<R>[] = [];
    // A row met again waits, and so does every later update of it (in order).
    const deferred = new Set<number>();
    for (const item of this.queue) {
      if (batch.length < this.maxRows && item.columns === columns && !ids.has(item.id) && !deferred.has(item.id)) {
        batch.push(item);
        ids.add(item.id);
      } else {
        rest.push(item);
        deferred.add(item.id);
      }
    }
    this.queue = rest;
    return batch;
  }

  private text(columns: string): string {
    let text = this.texts.get(columns);
    if (text === undefined) {
      const set = columns
        .split(',')
        .map((c) => `${quoted(c)} = v.${quoted(c)}`)
        .join(', ');
      const t = quoted(this.table);
      text = `with v as materialized (select * from json_populate_recordset(null::${t}, $1::json)),
        free as materialized (select r."id" from ${t} r where r."id" in (select "id" from v) for update skip locked)
        update ${t} as u set ${set}, "version" = u."version" + 1 from v
        where u."id" = v."id" and u."id" in (select "id" from free)
        returning ${this.returning.map((c) => `u.${quoted(c)}`).join(', ')}`;
      this.texts.set(columns, text);
    }
    return text;
  }

  /** One update on its own, outside the batches (the loop does not wait for it). */
  private runAlone(item: PendingUpdate<R>): void {
    this.alone(item.id, item.values).then((row) => {
      if (row !== undefined) countBatch(1);
      item.resolve(row);
    }, item.reject);
  }

  private async write(items: PendingUpdate<R>[]): Promise<void> {
    let rows: R[];
    try {
      const json = JSON.stringify(items.map((item) => ({ ...item.values, id: item.id })));
      rows = (await this.db.executeQuery(CompiledQuery.raw(this.text(items[0]!.columns), [json]))).rows as R[];
    } catch {
      for (const item of items) this.runAlone(item);
      return;
    }
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    if (rows.length > 0) countBatch(rows.length);
    for (const item of items) {
      const row = byId.get(item.id);
      if (row === undefined) this.runAlone(item);
      else item.resolve(row);
    }
  }
}
