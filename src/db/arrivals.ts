import type { IncomingMessage } from 'node:http';
import type { Kysely } from 'kysely';
import type { Db } from './database.js';
import { directSqlite } from './precompiled.js';
import { sqliteTableVersions, stampOf, tableVersions, type TableVersions, type VersionedTable } from './table-stamps.js';
import { setVersionsRider } from './versions-rider.js';
import { joinReads, readTable, readsWhile, Reads, tablesRead, unrecorded } from './reads.js';

// Requests numbered as they arrive, and the tables' versions shared by the requests that arrived
// before a read of them began. A version read after a request arrived holds every write committed
// before it arrived (a client's own acknowledged writes included), which is what the users index
// (modules/users/index/index-feed.ts) and the token lookup (auth/token-lookup.ts) must have seen
// before they answer from memory: one read serves every request that had arrived when it began,
// instead of one statement per request each; on PostgreSQL one at a time, the requests that arrive
// while one is under way sharing the next (the response cache's stamp is this read too), or the
// versions that a batch of reads by key sent meanwhile carries in its own statement (VersionsRider,
// db/pg-keyed.ts: no round trip of their own). A request without a number (built in process, as
// app.inject does) waits for a read that begins after its call.

const ARRIVAL = Symbol('arrival');
type Numbered = IncomingMessage & { [ARRIVAL]?: number };
let arrived = 0;

/** Numbers a request as the HTTP server receives it (http/response-cache.ts frontLaneServer). */
export function markArrival(req: IncomingMessage): void {
  (req as Numbered)[ARRIVAL] = ++arrived;
}

export function arrivalOf(req: IncomingMessage): number | undefined {
  return (req as Numbered)[ARRIVAL];
}

/** The versions of every table, read after the request numbered `arrival` arrived (a new read when none began since). */
export type VersionsAfter = (arrival: number | undefined) => TableVersions | Promise<TableVersions>;

export function versionsAfter(db: Db): VersionsAfter {
  const handle = directSqlite(db);
  const read = (): TableVersions | Promise<TableVersions> => (handle ? sqliteTableVersions(handle) : tableVersions(db as unknown as Kysely<unknown>));
  /** The last read done, and the one under way, with the last arrival number when each began. */
  let last: { since: number; versions: TableVersions } | undefined;
  let running: { since: number; versions: Promise<TableVersions> } | undefined;
  /** The newest read another statement carries (VersionsRider), while under way. */
  let carried: { since: number; versions: Promise<TableVersions> } | undefined;
  /** The calls no read begun so far serves: the read that begins when the one under way ends, or one carried before that. */
  let waiting: { promise: Promise<TableVersions>; resolve: (v: TableVersions) => void; reject: (e: unknown) => void } | undefined;
  const done = (since: number, versions: TableVersions) => {
    if (!last || last.since <= since) last = { since, versions };
  };
  const start = (): TableVersions | Promise<TableVersions> => {
    const since = arrived;
    // Shared by every request that arrived before it began: recorded by none (each records its table).
    const versions = unrecorded(read);
    if (!(versions instanceof Promise)) {
      done(since, versions);
      return versions;
    }
    const shared = versions.then(
      (v) => {
        done(since, v);
        if (running?.versions === shared) running = undefined;
        return v;
      },
      (err: unknown) => {
        if (running?.versions === shared) running = undefined;
        throw err;
      },
    );
    running = { since, versions: shared };
    return shared;
  };
  const get: VersionsAfter = (arrival) => {
    if (arrival !== undefined && last && last.since >= arrival) return last.versions;
    if (arrival !== undefined && running && running.since >= arrival) return running.versions;
    if (arrival !== undefined && carried && carried.since >= arrival) return carried.versions;
    if (!running) return start();
    // One read at a time (PostgreSQL): the calls the read under way cannot serve share the next one,
    // which begins once it ends (after all of them), instead of a round trip each as they come.
    if (!waiting) {
      let resolve!: (v: TableVersions) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<TableVersions>((res, rej) => ((resolve = res), (reject = rej)));
      const w = (waiting = { promise, resolve, reject });
      void running.versions
        .catch(() => undefined)
        .then(() => {
          // A statement that carried the versions began meanwhile: it serves them (carried below).
          if (waiting !== w) return;
          waiting = undefined;
          Promise.resolve(start()).then(w.resolve, w.reject);
        });
    }
    return waiting.promise;
  };
  if (!handle)
    setVersionsRider(db, {
      wanted: () => arrived > Math.max(last?.since ?? 0, running?.since ?? 0, carried?.since ?? 0),
      carried(versions) {
        const since = arrived;
        const w = waiting;
        waiting = undefined;
        // A statement that failed (its own read's error) leaves its requests to a read begun after it.
        const shared: Promise<TableVersions> = versions.then(
          (v) => {
            done(since, v);
            if (carried?.versions === shared) carried = undefined;
            return v;
          },
          () => {
            if (carried?.versions === shared) carried = undefined;
            return get(undefined);
          },
        );
        if (!carried || carried.since <= since) carried = { since, versions: shared };
        if (w) shared.then(w.resolve, w.reject);
      },
    });
  return get;
}

/**
 * Rows read by key, each kept with the versions, read before it was read, of the tables its read
 * touched (learnt by running the read under its own Reads, db/reads.ts: never a hand-written table
 * name), and given again from memory while versions read after the request arrived (`versions`, from
 * VersionsAfter) are still those: any write to one of those tables reads it again. A row whose read
 * touched a table no version covers, or none, is not kept; nor is a key the table has no row for.
 * Per database, at most `max` rows (then anew).
 */
type Held<R> = { row: R; tables: readonly VersionedTable[]; stamp: string };

export class HeldRows<R> {
  private readonly held = new WeakMap<object, Map<string, Held<R>>>();

  constructor(private readonly max = 10_000) {}

  async get(db: object, key: string, versions: TableVersions, read: () => Promise<R | undefined>): Promise<R | undefined> {
    let rows = this.held.get(db);
    const kept = rows?.get(key);
    if (kept && kept.stamp === stampOf(versions, kept.tables)) {
      for (const table of kept.tables) readTable(table);
      return kept.row;
    }
    const reads = new Reads();
    const row = await readsWhile(reads, read);
    // The answer that asked read those tables too.
    joinReads(reads);
    const tables = tablesRead(reads);
    if (!rows) this.held.set(db, (rows = new Map<string, Held<R>>()));
    if (row === undefined || tables === undefined) rows.delete(key);
    else {
      if (rows.size >= this.max) rows.clear();
      rows.set(key, { row, tables, stamp: stampOf(versions, tables) });
    }
    return row;
  }
}
