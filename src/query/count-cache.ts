import { BoundedMap, PerOwner } from './kept.js';

// Exact totals without recounting. Counting the rows a filter selects walks an index range (tens of
// milliseconds on a million users where the page costs well under one), so a total is remembered
// under the version of the table it counts (db/table-stamps.ts) and reused while that version
// stands: any write to the table moves it, in the writing transaction, whichever process or instance
// wrote, so a reused total is always exact. A write to another table leaves it alone.
// (Users' totals over status / country / age need no count at all: query/summary.ts.)
// The count returns the version its own statement read (one snapshot with the rows it counted), so a
// total is stored under the version it was counted at; a page reuses it when the version the page
// was read at is that same one (SQLite: read just before the page; PostgreSQL: in the page's own
// statement, so no extra round trip).

interface Entry {
  stamp: string;
  total: number;
}

/** Totals by query and values, per Kysely instance: at most 2,000, as long as the instance. */
const totals = new PerOwner(() => new BoundedMap<string, Entry>(2000));

/**
 * The total for `key` (the query and its values). `pageStamp`: the version of the counted table the
 * page was read at; a total stored under it is the total of that very page. `count` counts and
 * returns the version it counted at, read in its own statement (tableStampSql).
 */
export async function cachedTotal(db: object, key: string, count: () => Promise<{ total: number; stamp: string }>, pageStamp: string): Promise<number> {
  const cache = totals.of(db);
  const hit = cache.get(key);
  if (hit?.stamp === pageStamp) return hit.total;
  const counted = await count();
  cache.set(key, counted);
  return counted.total;
}
