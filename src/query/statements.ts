import { CompiledQuery, sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { directSqlite, prepared } from '../db/precompiled.js';
import type { Database } from '../db/database.js';
import { asciiLower } from '../db/sql.js';
import { isPostgres, sqliteTableStamp, tableStamp, tableStampSql, type VersionedTable } from '../db/table-stamps.js';
import { cachedTotal } from './count-cache.js';
import { summaryCovers, summedQuery, type Summary } from './summary.js';
import type { Condition } from './request.js';
import { PAGE_STAMP, applyToSelect, applyWhere, orderKeys, pageKeysQuery, stampedPageQuery, totalFromPage, type ListPlan } from './sql.js';

// Step 4, fast: a list query is built and compiled by Kysely once per *shape* (which base query,
// which filters with how many values, which sort), then reused with the new values of each request.
// Building and compiling costs tens of microseconds per request, a prepared statement a few.
//
// The values a shape binds are computed here, in the order sql.ts puts them into the SQL: the base
// query's, each filter's, then LIMIT and OFFSET. The first time a shape is seen, that list is checked
// against the parameters Kysely compiled; a shape where they differ is never cached (it is built
// per request, as before), so a mistake here costs speed, never a wrong answer.
//
// Deep pages: OFFSET n walks n index entries (about 0.1 us each, so page 4000 of 20 costs
// milliseconds). The sort-key values of page boundaries are remembered per query (filters and sort
// with their values): a later request for an offset at or past a remembered boundary starts there
// with a keyset condition and walks only the difference. Every page served remembers where it
// starts and where the next one does, so repeated pages and forward paging (Link: next) both seek.
// page/offset stay exact: the boundaries are valid only under the version of the listed table they
// were read at (db/table-stamps.ts), which any write to that table moves.

/** What a list reads from: the base query (table, scope such as album_id) and the values it binds. */
export interface ListSource<DB, TB extends keyof DB, O> {
  /** Names the base query: two sources with one key must build the same SQL. */
  key: string;
  /** The table listed: its version stamps what is remembered about the list. */
  table: VersionedTable;
  params: readonly unknown[];
  /** The base query with its select list: the page. */
  rows(): SelectQueryBuilder<DB, TB, O>;
  /** The base query without a select list: the count. */
  base(): SelectQueryBuilder<DB, TB, object>;
  /** Where totals come from without counting rows, for the filters it covers (query/summary.ts). */
  summary?: Summary;
  /**
   * SQLite: per sort field, the indexes that read the table in that field's order, ascending then
   * descending (ties by id ascending), with the filtered columns in them; null: the table itself
   * (id order). See orderIndex.
   */
  orderIndexes?: OrderIndexes;
  /**
   * SQLite: indexes that find the rows a filter on their first column selects, in order of
   * preference; the one for the first filtered column is used when finding and sorting the matching
   * rows is the cheaper way (orderIndex), so that the planner does not walk an order index instead.
   */
  filterIndexes?: readonly { column: string; index: string }[];
}

export type OrderIndexes = Readonly<Record<string, readonly [asc: string | null, desc: string | null]>>;

/**
 * Walking one entry of an index that holds the filtered columns costs about a twentieth of fetching
 * one matching row and sorting it (measured on a million users: 1M entries walked in ~75 ms, 64k
 * rows found by a filter index and sorted in ~140 ms).
 */
const WALK_VS_SORT = 20;

/**
 * SQLite: the index to read a page through, chosen from the exact total (known before the page
 * when a summary covers the filters). Reading in sort order walks about (offset + limit) x rows /
 * total index entries and stops; the other way finds all `total` matching rows and sorts them. The
 * planner cannot weigh the two (it does not know how many rows match), and for a broad filter it
 * sorts tens of thousands of rows to return twenty, so the choice is made here and written into
 * the statement (INDEXED BY). Undefined: leave it to the planner.
 */
function orderIndex(
  source: { orderIndexes?: OrderIndexes; filterIndexes?: readonly { column: string; index: string }[] },
  plan: ListPlan,
  total: number,
  rows: number,
): string | null | undefined {
  const first = plan.request.sort[0] ?? { field: 'id', direction: 'asc' };
  const indexes = source.orderIndexes?.[first.field];
  if (!indexes || total === 0) return undefined;
  const { limit, offset } = plan.request.page;
  if (((offset + limit) * rows) / total <= WALK_VS_SORT * total) return first.direction === 'asc' ? indexes[0] : indexes[1];
  const filtered = new Set(plan.filters.map((c) => c.def.column));
  return source.filterIndexes?.find((f) => filtered.has(f.column))?.index;
}

/** The statement with its reads of `table` through `index` (null: the table itself, in id order). */
function throughIndex(query: CompiledQuery, table: string, index: string | null | undefined): CompiledQuery {
  if (index === undefined) return query;
  const from = `from "${table}"`;
  const through = index === null ? `${from} not indexed` : `${from} indexed by "${index}"`;
  return CompiledQuery.raw(query.sql.split(from).join(through), [...query.parameters]);
}

/** The parameters one filter binds, as sql.ts's condition() binds them. */
function filterParams(c: Condition): unknown[] {
  const values = c.values;
  if (c.def.op !== 'eq') return [values[0]];
  if (c.def.caseInsensitive) return values.map((v) => asciiLower(String(v)));
  if (c.def.lowerIndexed && values.length === 1) return [asciiLower(String(values[0])), values[0]];
  return [...values];
}

function shapeOf(plan: ListPlan): string {
  const filters = plan.filters.map((c) => `${c.def.column}:${c.def.op}:${c.values.length}`).join(',');
  const sort = plan.request.sort.map((k) => `${k.field}:${k.direction}`).join(',');
  return `${filters}|${sort}`;
}

const MAX_SHAPES = 1000;
/** SQL text by shape key, per dialect (adapter class); null: a shape that is not reused. */
const textsByAdapter = new WeakMap<object, Map<string, string | null>>();

function textsFor(db: Kysely<unknown>): Map<string, string | null> {
  const adapter = db.getExecutor().adapter.constructor;
  let texts = textsByAdapter.get(adapter);
  if (!texts) textsByAdapter.set(adapter, (texts = new Map()));
  return texts;
}

const sameValues = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

interface Query {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * The query to run for shape `key` with `params`: its cached SQL with these values, or on first use
 * (and for a shape that is not reusable) what `build()` compiles.
 */
function shapeQuery(db: Kysely<unknown>, key: string, params: unknown[], build: () => CompiledQuery): Query {
  const texts = textsFor(db);
  const known = texts.get(key);
  if (known) return { sql: known, parameters: params };
  const compiled = build();
  if (known === undefined) {
    if (texts.size >= MAX_SHAPES) texts.clear();
    texts.set(key, sameValues(compiled.parameters, params) ? compiled.sql : null);
  }
  return compiled;
}

async function run<R>(db: Kysely<unknown>, query: Query): Promise<R[]> {
  const handle = directSqlite(db as unknown as Kysely<Database>);
  if (handle) return prepared(handle, query.sql).all([...query.parameters]) as R[];
  return (await db.executeQuery(CompiledQuery.raw(query.sql, [...query.parameters]))).rows as R[];
}

interface Boundaries {
  stamp: string;
  /** offset -> sort-key values of the row just before it. */
  at: Map<number, unknown[]>;
}

const MAX_QUERIES = 2000;
const MAX_BOUNDARIES = 64;
const boundariesByDb = new WeakMap<object, Map<string, Boundaries>>();

function boundariesFor(db: object, query: string, stamp: string): Boundaries {
  let all = boundariesByDb.get(db);
  if (!all) boundariesByDb.set(db, (all = new Map()));
  let entry = all.get(query);
  if (!entry || entry.stamp !== stamp) {
    if (all.size >= MAX_QUERIES) all.delete(all.keys().next().value as string);
    entry = { stamp, at: new Map() };
    all.set(query, entry);
  }
  return entry;
}

/** The boundaries last remembered for `query`, whatever their stamp (PostgreSQL checks it afterwards). */
function lastBoundaries(db: object, query: string): Boundaries | undefined {
  return boundariesByDb.get(db)?.get(query);
}

/** The nearest remembered boundary at or before `offset` (0 = the start, which needs none). */
function nearest(boundaries: Boundaries, offset: number): number {
  let best = 0;
  for (const at of boundaries.at.keys()) if (at <= offset && at > best) best = at;
  return best;
}

function remember(boundaries: Boundaries, offset: number, row: Record<string, unknown>, keyCount: number): void {
  if (offset <= 0 || boundaries.at.has(offset)) return;
  if (boundaries.at.size >= MAX_BOUNDARIES) boundaries.at.delete(boundaries.at.keys().next().value as number);
  boundaries.at.set(offset, Array.from({ length: keyCount }, (_, i) => row[`k${i}`]));
}

/** Names the boundaries of one query: source, shape and the values it binds. */
const boundaryKey = (source: { key: string }, shape: string, whereParams: unknown[]) => `${source.key}|${shape}\u0000${JSON.stringify(whereParams)}`;

/**
 * Where to read a page at `offset` from: the nearest remembered boundary (`after`, none at the start)
 * and the window past it. One entry before the page is read too (`lead`, when there is one past the
 * boundary): its keys are the page's own boundary.
 */
function seekWindow(boundaries: Boundaries | undefined, offset: number, limit: number) {
  const from = boundaries ? nearest(boundaries, offset) : 0;
  const after = from > 0 ? boundaries!.at.get(from)! : undefined;
  const lead = offset > from ? 1 : 0;
  return { after, lead, window: { limit: limit + lead, offset: offset - from - lead } };
}

/** The page among the entries a seekWindow read; remembers where it starts and where the next one does. */
function pageOf<E extends Record<string, unknown>>(boundaries: Boundaries, entries: E[], lead: number, offset: number, limit: number, keyCount: number): E[] {
  if (lead && entries.length > 0) remember(boundaries, offset, entries[0]!, keyCount);
  const page = lead ? entries.slice(1) : entries;
  if (page.length === limit) remember(boundaries, offset + limit, page[page.length - 1]!, keyCount);
  return page;
}

/**
 * The page rows on SQLite, and the version of the listed table they were read at. At offset 0, or
 * inside a transaction (no direct handle), one query. Past the first page: first the page's ids
 * from the index alone (seeking from a remembered boundary where there is one), then those rows by
 * id: OFFSET then skips index entries, never rows. With a direct handle the path is synchronous
 * from the version to the rows, so no other request's write can come between them.
 */
async function pageRows<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  shape: string,
  whereParams: unknown[],
  index: string | null | undefined,
): Promise<{ rows: O[]; stamp: string }> {
  const untyped = db as unknown as Kysely<unknown>;
  const { limit, offset } = plan.request.page;
  const handle = directSqlite(db as unknown as Kysely<Database>);
  shape = `${shape}|${index}`;
  if (!handle || offset === 0) {
    const stamp = handle ? sqliteTableStamp(handle, source.table) : await tableStamp(untyped, source.table);
    const params = [...whereParams, limit, offset];
    const rows = await run<O>(untyped, shapeQuery(untyped, `${source.key}|page|${shape}`, params, () => throughIndex(applyToSelect(source.rows(), plan).compile(), source.table, index)));
    return { rows, stamp };
  }
  const keys = orderKeys(plan);
  const stamp = sqliteTableStamp(handle, source.table);
  const boundaries = boundariesFor(db, boundaryKey(source, shape, whereParams), stamp);
  const { after, lead, window } = seekWindow(boundaries, offset, limit);
  const idsQuery = shapeQuery(untyped, `${source.key}|ids${after ? '-seek' : ''}|${shape}`, windowParams(whereParams, keys.length, after, window), () =>
    throughIndex(pageKeysQuery(source.base, plan, after, window).compile(untyped), source.table, index),
  );
  const entries = prepared(handle, idsQuery.sql).all([...idsQuery.parameters]) as Record<string, unknown>[];
  const page = pageOf(boundaries, entries, lead, offset, limit, keys.length);
  if (page.length === 0) return { rows: [], stamp };

  const ids = JSON.stringify(page.map((e) => e.id));
  const byIds = shapeQuery(untyped, `${source.key}|by-ids`, [...source.params, ids], () =>
    source.rows().where(sql<SqlBool>`${sql.ref('id')} in (select value from json_each(${ids}))`).compile(),
  );
  const rows = prepared(handle, byIds.sql).all([...byIds.parameters]) as O[];
  const byId = new Map(rows.map((r) => [(r as { id: unknown }).id, r]));
  return { rows: page.map((e) => byId.get(e.id)!), stamp };
}

/** Seek parameters for a window after `after`, as pageKeysQuery and stampedPageQuery bind them. */
function windowParams(whereParams: unknown[], keyCount: number, after: unknown[] | undefined, window: { limit: number; offset: number }): unknown[] {
  if (!after) return [...whereParams, window.limit, window.offset];
  return [
    ...Array.from({ length: keyCount }, (_, i) => [...whereParams, ...after.slice(0, keyCount - i), window.limit + window.offset]).flat(),
    window.limit,
    window.offset,
  ];
}

/**
 * PostgreSQL pages. Reading the version first would cost a round trip, so each page's statement
 * returns the version of the listed table it read the rows at (stampedPageQuery): the page's
 * boundaries are remembered under it, as on SQLite, and a later request seeks from the nearest one
 * in a statement whose stamp says whether that boundary still holds. When it does not (a write in
 * between), the answer is thrown away and the page read by offset. Returns the rows and their stamp.
 */
async function stampedPageRows<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  shape: string,
  whereParams: unknown[],
): Promise<{ rows: O[]; stamp: string }> {
  const untyped = db as unknown as Kysely<unknown>;
  const { limit, offset } = plan.request.page;
  const keys = orderKeys(plan);
  const query = boundaryKey(source, shape, whereParams);

  const read = async (boundaries: Boundaries | undefined) => {
    const { after, lead, window } = seekWindow(boundaries, offset, limit);
    const compiled = shapeQuery(untyped, `${source.key}|stamped${after ? '-seek' : ''}|${shape}`, windowParams(whereParams, keys.length, after, window), () =>
      stampedPageQuery(source.rows, source.table, plan, after, window).compile(untyped),
    );
    const found = await run<Record<string, unknown>>(untyped, compiled);
    return { found, lead, stamp: String(found[0]?.[PAGE_STAMP] ?? '') };
  };

  const known = lastBoundaries(db, query);
  let result = await read(known);
  if (known && result.stamp !== known.stamp) result = await read(undefined);
  const boundaries = boundariesFor(db, query, result.stamp);
  const entries = result.found[0]?.id === null ? [] : result.found;
  const rows = pageOf(boundaries, entries, result.lead, offset, limit, keys.length).map((entry) => {
    const row: Record<string, unknown> = { ...entry };
    delete row[PAGE_STAMP];
    for (let i = 0; i < keys.length; i++) delete row[`k${i}`];
    return row as O;
  });
  return { rows, stamp: result.stamp };
}

/**
 * One page of a collection and the total its filters select. When a summary covers the filters
 * (query/summary.ts) the exact total comes first, from it: a page past the end is then known to be
 * empty without reading it, and on SQLite the total decides how the page is read (orderIndex).
 * Otherwise the page comes first and the total is counted, unless the page itself tells it, and
 * remembered under the table's version (query/count-cache.ts).
 */
export async function listPage<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
): Promise<{ rows: O[]; total: number }> {
  const untyped = db as unknown as Kysely<unknown>;
  const shape = shapeOf(plan);
  const whereParams = [...source.params, ...plan.filters.flatMap(filterParams)];
  const postgres = isPostgres(untyped);

  // The summary's rows carry the filtered columns, not a base query's scope (only unscoped lists have one).
  if (source.params.length === 0 && summaryCovers(source.summary, plan.filters)) {
    const summary = source.summary;
    const summed = shapeQuery(untyped, `${source.key}|summed|${shape}`, plan.filters.flatMap(filterParams), () =>
      summedQuery(summary, source.table, plan.filters).compile(untyped),
    );
    const [counts] = await run<{ total: unknown; all_rows: unknown }>(untyped, summed);
    const total = Number(counts?.total ?? 0);
    if (plan.request.page.offset >= total) return { rows: [], total };
    const index = postgres ? undefined : orderIndex(source, plan, total, Number(counts?.all_rows ?? 0));
    const { rows } = postgres
      ? await stampedPageRows(db, source, plan, shape, whereParams)
      : await pageRows(db, source, plan, shape, whereParams, index);
    return { rows, total };
  }

  const { rows, stamp } = postgres
    ? await stampedPageRows(db, source, plan, shape, whereParams)
    : await pageRows(db, source, plan, shape, whereParams, undefined);
  const known = totalFromPage(plan, rows.length);
  if (known !== undefined) return { rows, total: known };

  const counting = shapeQuery(untyped, `${source.key}|count|${shape}`, whereParams, () =>
    applyWhere(source.base(), plan.filters)
      .select([sql<number | string | bigint>`count(*)`.as('total'), tableStampSql(source.table).as('stamp')] as never)
      .compile(),
  );
  const total = await cachedTotal(db, `${counting.sql}\u0000${JSON.stringify(counting.parameters)}`, async () => {
    const [row] = await run<{ total?: unknown; stamp?: unknown }>(untyped, counting);
    return { total: Number(row?.total ?? 0), stamp: String(row?.stamp) };
  }, stamp);
  return { rows, total };
}

/** How many list shapes run from cached SQL and how many are built per request (tests: every shape should be reusable). */
export function shapeStats(db: Kysely<unknown>): { reused: number; rebuilt: number } {
  const texts = [...textsFor(db).values()];
  return { reused: texts.filter((t) => t !== null).length, rebuilt: texts.filter((t) => t === null).length };
}
