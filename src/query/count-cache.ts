import { SqliteAdapter, sql, type Kysely } from 'kysely';
import type SQLite from 'better-sqlite3';
import { directSqlite, prepared } from '../db/precompiled.js';
import type { Database } from '../db/database.js';

// Exact totals without recounting. Counting the rows a filter selects walks an index range, which on
// a million users costs tens of milliseconds while the page itself costs well under one. On SQLite a
// total stays valid while nothing in the database changes, and SQLite tells us cheaply whether
// anything did: total_changes() counts this connection's writes, `data_version` moves when another
// connection (another process) commits. Any write anywhere invalidates every cached total, so a
// cached total is always exact.
//
// On PostgreSQL the stamp is pg_current_snapshot(): which transactions are committed, running or
// not yet started, cluster-wide. Equal snapshot texts before and after a count mean no transaction
// with a write started or ended in between, so the count's own snapshot was that same state: such a
// total is cached under it, and reused while the current snapshot is still the same text (a read-only
// stretch; any write, by any instance, moves it). A count with writes around it is not cached.

interface Entry {
  stamp: string;
  total: number;
}

const MAX_ENTRIES = 500;
const caches = new WeakMap<object, Map<string, Entry>>();

const STAMP = 'select total_changes() as c, (select data_version from pragma_data_version) as v';
type StampRow = { c: number; v: number } | undefined;
const stampText = (row: StampRow) => `${row?.c}:${row?.v}`;

/**
 * What identifies the current state of a SQLite database: equal stamps, same data. Two statements,
 * not STAMP: the pragma_data_version table function prepares a PRAGMA statement on every run, which
 * tripled the cost of the stamp (it is read on every GET by the response cache).
 */
export function sqliteStamp(handle: SQLite.Database): string {
  const changes = prepared(handle, 'select total_changes() as c').get() as { c: number };
  const version = prepared(handle, 'pragma data_version').get() as { data_version: number };
  return `${changes.c}:${version.data_version}`;
}

async function stampOf<DB>(db: Kysely<DB>): Promise<string> {
  const handle = directSqlite(db as unknown as Kysely<Database>);
  if (handle) return sqliteStamp(handle);
  return stampText((await sql<NonNullable<StampRow>>`${sql.raw(STAMP)}`.execute(db)).rows[0]);
}

/** The PostgreSQL stamp: the current snapshot, cluster-wide (see above). */
export async function postgresStamp<DB>(db: Kysely<DB>): Promise<string> {
  return (await sql<{ s: string }>`select pg_current_snapshot()::text as s`.execute(db)).rows[0]?.s ?? '';
}

/**
 * `count()` through the cache; `key` identifies the query and its values. `pageStamp`: the PostgreSQL
 * snapshot the page itself was read under; a total cached under it is the total of that very page,
 * with no further round trip.
 */
export async function cachedTotal<DB>(db: Kysely<DB>, key: string, count: () => Promise<number>, pageStamp?: string): Promise<number> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  const hit = cache.get(key);
  if (!sqlite && pageStamp !== undefined && hit?.stamp === pageStamp) return hit.total;
  const stamp = sqlite ? await stampOf(db) : await postgresStamp(db);
  if (hit && hit.stamp === stamp) return hit.total;
  const total = await count();
  // SQLite: the stamp read before counting; a write in between makes the entry stale, never wrong-and-fresh.
  // PostgreSQL: cached only when the snapshot did not move while counting.
  if (!sqlite && (await postgresStamp(db)) !== stamp) return total;
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(key, { stamp, total });
  return total;
}
