import { SqliteAdapter, sql, type Kysely } from 'kysely';

// Exact totals without recounting. Counting the rows a filter selects walks an index range, which on
// a million users costs tens of milliseconds while the page itself costs well under one. On SQLite a
// total stays valid while nothing in the database changes, and SQLite tells us cheaply whether
// anything did: total_changes() counts this connection's writes, `data_version` moves when another
// connection (another process) commits. Any write anywhere invalidates every cached total, so a
// cached total is always exact. PostgreSQL has no such cheap signal; there every total is counted.

interface Entry {
  stamp: string;
  total: number;
}

const MAX_ENTRIES = 500;
const caches = new WeakMap<object, Map<string, Entry>>();

async function stampOf<DB>(db: Kysely<DB>): Promise<string> {
  const { rows } = await sql<{ c: number; v: number }>`select total_changes() as c, (select data_version from pragma_data_version) as v`.execute(db);
  return `${rows[0]?.c}:${rows[0]?.v}`;
}

/** `count()` through the cache (SQLite) or directly (others); `key` identifies the query and its values. */
export async function cachedTotal<DB>(db: Kysely<DB>, key: string, count: () => Promise<number>): Promise<number> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return count();
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  const stamp = await stampOf(db);
  const hit = cache.get(key);
  if (hit && hit.stamp === stamp) return hit.total;
  const total = await count();
  // The stamp read before counting: a write in between makes the entry stale, never wrong-and-fresh.
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(key, { stamp, total });
  return total;
}
