import type { Kysely } from 'kysely';
import { rowsOf } from './pg-direct.js';
import { joinReads, readsWhile, Reads, unrecorded } from './reads.js';

// Concurrent single-row reads of one precompiled statement on PostgreSQL, as one statement (issue 32).
// On PostgreSQL every statement costs the service and the server a round trip (the driver, promises,
// a socket write that wakes a backend, a transaction), far more than reading one row by key; a
// GET /users/{id} and a GET of an album's songs each read a row by key. Here the reads of one
// statement that arrive while a batch of it is being read queue up, and the next batch reads all of
// them (up to MAX_KEYS) at once: the statement runs for every set of values in one statement,
//
//   select k.n as "__n", q.* from unnest((select $1::int4[]), ...) with ordinality as k("p1", ..., n)
//     cross join lateral (<the statement, with $i read from k."pi">) as q
//
// so each read's rows are those of the one-row statement with its own values (the same plan per
// key, whatever the statement), told apart by their place in the arrays. The values are bound by
// name: each parameter's array holds the value each read gives for that name. Each array is a
// scalar subquery so that no plan knows its length: with `unnest($1)` PostgreSQL found a plan for
// the few keys of each batch cheaper than its generic plan (10 keys estimated), and so planned every
// run again (70-90 us each, more than the statement's execution); now its generic plan is kept.
// What the batch read joins every caller's reads (db/reads.ts): derived from the statement it ran.

const MAX_KEYS = 500;
const ROW = '__n';

interface Pending<R> {
  params: readonly unknown[];
  resolve: (rows: R[]) => void;
  reject: (error: unknown) => void;
}

/**
 * The many-keys form of a one-row statement whose parameters are `types` (PostgreSQL type names, in
 * the order the statement binds them): parameter i becomes the i-th array. Refused (undefined) when
 * the text has a string literal or a dollar quote, where a `$i` might not be a parameter.
 */
export function keyedSql(sql: string, types: readonly string[]): string | undefined {
  if (sql.includes("'") || sql.includes('$$')) return undefined;
  const body = sql.replace(/\$(\d+)(?!\d)/g, (_, i: string) => {
    const n = Number(i);
    if (!(n >= 1 && n <= types.length)) throw new Error(`keyed read: $${i} is not one of ${types.length} parameters: ${sql}`);
    return `k."p${n}"`;
  });
  const arrays = types.map((type, i) => `(select $${i + 1}::${type}[])`).join(', ');
  const columns = types.map((_, i) => `"p${i + 1}"`).join(', ');
  return `select k.n as "${ROW}", q.* from unnest(${arrays}) with ordinality as k(${columns}, n) cross join lateral (${body}) as q`;
}

/** The batches of one statement's reads on one database (a pool, never a transaction). */
export class ReadBatcher<R> {
  private queue: Pending<R>[] = [];
  private running = false;

  constructor(
    private readonly db: Kysely<unknown>,
    private readonly sql: string,
  ) {}

  /** The rows the one-row statement gives for `params` (its parameters in the order it binds them). */
  run(params: readonly unknown[]): Promise<R[]> {
    return new Promise<R[]>((resolve, reject) => {
      this.queue.push({ params, resolve, reject });
      if (!this.running) void unrecorded(() => this.loop());
    });
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      // Reads asked in the same turn of the event loop start together.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.queue.length > 0) await this.read(this.queue.splice(0, MAX_KEYS));
    } finally {
      this.running = false;
    }
  }

  /** Never throws: every item is answered, with its rows or the batch's error. */
  private async read(items: Pending<R>[]): Promise<void> {
    const reads = new Reads();
    try {
      const arrays = items[0]!.params.map((_, i) => items.map((item) => item.params[i]));
      const rows = await readsWhile(reads, () => rowsOf<Record<string, unknown>>(this.db, this.sql, arrays));
      const byItem = items.map(() => [] as R[]);
      for (const row of rows) {
        const out: Record<string, unknown> = {};
        for (const key in row) if (key !== ROW) out[key] = row[key];
        byItem[Number(row[ROW]) - 1]!.push(out as R);
      }
      // Each caller's answer read what the batch read: joined in the caller's own context (takeReads).
      items.forEach((item, i) => item.resolve(joinedRows(reads, byItem[i]!)));
    } catch (error) {
      for (const item of items) item.reject(error);
    }
  }
}

/** Rows handed to a caller, whose answer's reads the batch's join when it takes them (takeReads). */
function joinedRows<R>(reads: Reads, rows: R[]): R[] {
  pendingReads.set(rows, reads);
  return rows;
}

const pendingReads = new WeakMap<object, Reads>();

/** In the caller's context: what the batch that read `rows` read joins the caller's answer's reads. */
export function takeReads<R>(rows: R[]): R[] {
  const reads = pendingReads.get(rows);
  if (reads) joinReads(reads);
  return rows;
}
