import type { Kysely } from 'kysely';
import { rowsOf } from './pg-direct.js';
import { joinReads, readStatement, readsWhile, Reads, unrecorded } from './reads.js';
import { CARRIED_VERSION_COLUMNS, CARRIED_VERSIONS_SQL, carriedVersions, versionsRider, type TableVersions } from './versions-rider.js';

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
// When requests are waiting for the tables' versions (db/arrivals.ts, db/versions-rider.ts), the batch's
// statement reads those too, in its own snapshot (one row of them left-joined to its rows): they are
// read after every request that had arrived when it was sent, so those requests take them instead of
// a read of their own (a round trip fewer: issue 32). The callers' reads are still those of the
// statement without the versions (its text, recorded as if it ran): each user of the versions records
// the table it uses them for.

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

  /** The statement with every table's version joined (CARRIED_VERSIONS_SQL): one row of them, then the read's rows. */
  private readonly carryingSql: string;

  constructor(
    private readonly db: Kysely<unknown>,
    private readonly sql: string,
  ) {
    this.carryingSql = `select v.*, b.* from (${CARRIED_VERSIONS_SQL}) as v left join lateral (${sql}) as b on true`;
  }

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
    // Requests waiting for the tables' versions (db/arrivals.ts): this statement reads them too.
    const rider = versionsRider(this.db);
    const versions = rider?.wanted() ? promised<TableVersions>() : undefined;
    if (versions) rider!.carried(versions.promise);
    try {
      const arrays = items[0]!.params.map((_, i) => items.map((item) => item.params[i]));
      let rows: Record<string, unknown>[];
      if (versions) {
        // The answers read what the statement without the versions reads: its text is recorded, the
        // versions are every request's that uses them (each records its own table).
        readsWhile(reads, () => readStatement(this.sql));
        rows = await unrecorded(() => rowsOf<Record<string, unknown>>(this.db, this.carryingSql, arrays));
        if (rows[0] === undefined) versions.reject(new Error('keyed read: no row of versions'));
        else versions.resolve(carriedVersions(rows[0]));
      } else {
        rows = await readsWhile(reads, () => rowsOf<Record<string, unknown>>(this.db, this.sql, arrays));
      }
      const byItem = items.map(() => [] as R[]);
      for (const row of rows) {
        // With the versions: one row with no read's row (null) when no key has one.
        if (row[ROW] == null) continue;
        const out: Record<string, unknown> = {};
        for (const key in row) if (key !== ROW && !CARRIED_VERSION_COLUMNS.has(key)) out[key] = row[key];
        byItem[Number(row[ROW]) - 1]!.push(out as R);
      }
      // Each caller's answer read what the batch read: joined in the caller's own context (takeReads).
      items.forEach((item, i) => item.resolve(joinedRows(reads, byItem[i]!)));
    } catch (error) {
      versions?.reject(error);
      for (const item of items) item.reject(error);
    }
  }
}

/** A promise and what settles it. */
function promised<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
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
