import { BoundedMap, PerOwner } from './kept.js';

// Deep pages: OFFSET n walks n index entries (about 0.1 us each, so page 4000 of 20 costs
// milliseconds). The sort-key values of page boundaries are remembered per query (filters and sort
// with their values): a later request for an offset at or past a remembered boundary starts there
// with a keyset condition and walks only the difference. Every page served remembers where it
// starts and where the next one does, so repeated pages and forward paging (Link: next) both seek.
// page/offset stay exact: the boundaries are valid only under the version of the listed table they
// were read at (db/table-stamps.ts), which any write to that table moves. The statements that seek
// are list/sqlite.ts pageKeysQuery and list/postgres.ts stampedPageQuery, which run them.

export interface Boundaries {
  stamp: string;
  /** offset -> sort-key values of the row just before it (at most 64). */
  at: BoundedMap<number, unknown[]>;
}

/** Boundaries by query, per Kysely instance: at most 2,000 queries of 64 boundaries each, as long as the instance. */
const boundariesByDb = new PerOwner(() => new BoundedMap<string, Boundaries>(2000));

export function boundariesFor(db: object, query: string, stamp: string, max = 64): Boundaries {
  const all = boundariesByDb.of(db);
  let entry = all.get(query);
  if (!entry || entry.stamp !== stamp) all.set(query, (entry = { stamp, at: new BoundedMap(max) }));
  else if (entry.at.max < max) {
    // Room for a ladder's rungs (rememberRungs) beside the boundaries already known.
    const at = new BoundedMap<number, unknown[]>(max);
    for (const [offset, keys] of entry.at.entries()) at.set(offset, keys);
    entry.at = at;
  }
  return entry;
}

/**
 * A ladder: at most this many boundaries read at once, evenly spaced along a list up to a deep page
 * (list/postgres.ts ladderQuery), so that later deep pages of the same list seek from a rung near
 * them instead of walking from the start. A list's boundaries then hold up to LADDER_MAX.
 */
export const LADDER_RUNGS = 128;
export const LADDER_MAX = LADDER_RUNGS + 64;

/** Remembers rows that carry their position (`n`: the boundary before offset n is row n's keys) and their sort-key values. */
export function rememberRungs(boundaries: Boundaries, rows: readonly Record<string, unknown>[], keyCount: number): void {
  for (const row of rows) if (row.n !== null && row.n !== undefined) remember(boundaries, Number(row.n), row, keyCount);
}

/** The offset of the nearest remembered boundary at or before `offset` (0: none, the start). */
export function nearestBoundary(boundaries: Boundaries | undefined, offset: number): number {
  return boundaries ? nearest(boundaries, offset) : 0;
}

/** The boundaries last remembered for `query`, whatever their stamp (PostgreSQL checks it afterwards). */
export function lastBoundaries(db: object, query: string): Boundaries | undefined {
  return boundariesByDb.peek(db)?.get(query);
}

/** The nearest remembered boundary at or before `offset` (0 = the start, which needs none). */
function nearest(boundaries: Boundaries, offset: number): number {
  let best = 0;
  for (const at of boundaries.at.keys()) if (at <= offset && at > best) best = at;
  return best;
}

/**
 * PostgreSQL does not run a seek's arms (one per sort key) in turn as SQLite does: with more than one
 * key it sorts their union, every entry past the boundary, at about this many index entries walked
 * each. The boundary is then used only when the walk it saves costs more than that sort.
 */
const SORT_VS_WALK = 4;

function remember(boundaries: Boundaries, offset: number, row: Record<string, unknown>, keyCount: number): void {
  if (offset <= 0 || boundaries.at.has(offset)) return;
  boundaries.at.set(
    offset,
    Array.from({ length: keyCount }, (_, i) => row[`k${i}`]),
  );
}

/** Names the boundaries of one query: source, shape and the values it binds. */
export const boundaryKey = (source: { key: string }, shape: string, whereValues: Readonly<Record<string, unknown>>) =>
  `${source.key}|${shape}\u0000${JSON.stringify(whereValues)}`;

/**
 * Where to read a page at `offset` from: the nearest remembered boundary (`after`, none at the start)
 * and the window past it. One entry before the page is read too (`lead`, when there is one past the
 * boundary): its keys are the page's own boundary. `sortedArms`: see SORT_VS_WALK.
 */
export function seekWindow(boundaries: Boundaries | undefined, offset: number, limit: number, sortedArms = 0) {
  let from = boundaries ? nearest(boundaries, offset) : 0;
  // `sortedArms`: the arms are sorted together (PostgreSQL), that many; one arm is already in order.
  if (sortedArms > 1 && (offset - from) * SORT_VS_WALK * sortedArms > from) from = 0;
  const after = from > 0 ? boundaries!.at.get(from)! : undefined;
  const lead = offset > from ? 1 : 0;
  return { after, lead, window: { limit: limit + lead, offset: offset - from - lead } };
}

/** The page among the entries a seekWindow read; remembers where it starts and where the next one does. */
export function pageOf<E extends Record<string, unknown>>(
  boundaries: Boundaries,
  entries: E[],
  lead: number,
  offset: number,
  limit: number,
  keyCount: number,
): E[] {
  if (lead && entries.length > 0) remember(boundaries, offset, entries[0]!, keyCount);
  const page = lead ? entries.slice(1) : entries;
  if (page.length === limit) remember(boundaries, offset + limit, page[page.length - 1]!, keyCount);
  return page;
}
