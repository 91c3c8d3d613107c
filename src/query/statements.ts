import { sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { directSqlite, prepared } from '../db/precompiled.js';
import type { Database } from '../db/database.js';
import { run, shapeOf, shapeQuery } from './shapes.js';
import { param } from '../db/named-params.js';
import { boundariesFor, boundaryKey, lastBoundaries, pageOf, seekWindow, type Boundaries } from './seek.js';
import { orderIndex, throughIndex, withoutFixedKeys, type OrderIndexes } from './page-strategy.js';
import { isPostgres, sqliteTableStamp, tableStamp, tableStampSql, type VersionedTable } from '../db/table-stamps.js';
import { cachedTotal } from './count-cache.js';
import { summaryCovers, summaryValuesQuery, summedQuery, type Summary } from './summary.js';
import type { Condition } from './request.js';
import {
  PAGE_STAMP,
  applyToSelect,
  applyWhere,
  filterValues,
  orderKeys,
  pageKeysQuery,
  stampedPageQuery,
  totalFromPage,
  windowValues,
  type ListPlan,
} from './sql.js';

// Step 4: a page of a collection and its exact total, read with the shapes of shapes.ts (SQL built
// once per shape), the page strategy of page-strategy.ts (which index, which keys order it), the
// deep-page seeks of seek.ts and the totals of summary.ts / count-cache.ts.

/** What a list reads from: the base query (table, scope such as album_id) and the values it binds. */
export interface ListSource<DB, TB extends keyof DB, O> {
  /** Names the base query: two sources with one key must build the same SQL. */
  key: string;
  /** The table listed: its version stamps what is remembered about the list. */
  table: VersionedTable;
  /** The values the base query binds, by the names it gives them with param() (the album of a songs list). */
  values: Readonly<Record<string, unknown>>;
  /** The base query with its select list: the page. */
  rows: () => SelectQueryBuilder<DB, TB, O>;
  /** The base query without a select list: the count. */
  base: () => SelectQueryBuilder<DB, TB, object>;
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
  whereValues: Readonly<Record<string, unknown>>,
  index: string | null | undefined,
): Promise<{ rows: O[]; stamp: string }> {
  const untyped = db as unknown as Kysely<unknown>;
  const { limit, offset } = plan.request.page;
  const handle = directSqlite(db as unknown as Kysely<Database>);
  shape = `${shape}|${index}`;
  if (!handle || offset === 0) {
    const stamp = handle ? sqliteTableStamp(handle, source.table) : await tableStamp(untyped, source.table);
    const values = { ...whereValues, limit, offset };
    const rows = await run<O>(
      untyped,
      shapeQuery(untyped, `${source.key}|page|${shape}`, values, () => throughIndex(applyToSelect(source.rows(), plan).compile(), source.table, index)),
    );
    return { rows, stamp };
  }
  const keys = orderKeys(plan);
  const stamp = sqliteTableStamp(handle, source.table);
  const boundaries = boundariesFor(db, boundaryKey(source, shape, whereValues), stamp);
  const { after, lead, window } = seekWindow(boundaries, offset, limit);
  const idsQuery = shapeQuery(untyped, `${source.key}|ids${after ? '-seek' : ''}|${shape}`, { ...whereValues, ...windowValues(after, window) }, () =>
    throughIndex(pageKeysQuery(source.base, plan, after !== undefined).compile(untyped), source.table, index),
  );
  const entries = prepared(handle, idsQuery.sql).all([...idsQuery.parameters]) as Record<string, unknown>[];
  const page = pageOf(boundaries, entries, lead, offset, limit, keys.length);
  if (page.length === 0) return { rows: [], stamp };

  const ids = JSON.stringify(page.map((e) => e.id));
  const byIds = shapeQuery(untyped, `${source.key}|by-ids`, { ...source.values, ids }, () =>
    source
      .rows()
      .where(sql<SqlBool>`${sql.ref('id')} in (select value from json_each(${param('ids')}))`)
      .compile(),
  );
  const rows = prepared(handle, byIds.sql).all([...byIds.parameters]) as O[];
  const byId = new Map(rows.map((r) => [(r as { id: unknown }).id, r]));
  return { rows: page.map((e) => byId.get(e.id)!), stamp };
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
  whereValues: Readonly<Record<string, unknown>>,
): Promise<{ rows: O[]; stamp: string }> {
  const untyped = db as unknown as Kysely<unknown>;
  const { limit, offset } = plan.request.page;
  const keys = orderKeys(plan);
  const query = boundaryKey(source, shape, whereValues);

  const read = async (boundaries: Boundaries | undefined) => {
    const { after, lead, window } = seekWindow(boundaries, offset, limit);
    const compiled = shapeQuery(untyped, `${source.key}|stamped${after ? '-seek' : ''}|${shape}`, { ...whereValues, ...windowValues(after, window) }, () =>
      stampedPageQuery(source.rows, source.table, plan, after !== undefined).compile(untyped),
    );
    const found = await run<Record<string, unknown>>(untyped, compiled);
    return { found, lead, stamp: String((found[0]?.[PAGE_STAMP] as string | number | undefined) ?? '') };
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
 * A sort led by a column the summary counts by (status, country, age) and then other keys: no
 * index holds (status, last_name, id) for every second key, and reading the first key's index
 * sorts each of its values' rows (half a million users for a status) by the rest. So the page is
 * read one value at a time: the summary gives every value's exact total under the filters, in the
 * sort order of the values, in one small statement; the values before the page are skipped unread,
 * and each value the page spans is the same list with that value as one more filter and the rest
 * of the sort, an ordinary list read through the next key's own index.
 */
async function byValue<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  total: number,
): Promise<{ rows: O[]; total: number } | undefined> {
  const [first, ...rest] = plan.request.sort;
  const summary = source.summary;
  // Led by the column and then only `id asc` (the tie-break): the column's own index is in that order.
  const onlyTieBreak = rest.every((k) => k.field === 'id' && k.direction === 'asc');
  if (!first || !summary?.columns.includes(first.def.column) || onlyTieBreak) return undefined;
  const untyped = db as unknown as Kysely<unknown>;
  const folded = first.def.type === 'string';
  const valuesQuery = shapeQuery(untyped, `${source.key}|values:${first.field}:${first.direction}|${shapeOf(plan)}`, filterValues(plan.filters), () =>
    summaryValuesQuery(summary, first.def.column, folded, first.direction, plan.filters).compile(untyped),
  );
  const values = await run<{ value: string | number; n: unknown }>(untyped, valuesQuery);
  let { offset, limit } = plan.request.page;
  const rows: O[] = [];
  for (const { value, n } of values) {
    if (limit === 0) break;
    const inValue = Number(n);
    if (offset >= inValue) {
      offset -= inValue;
      continue;
    }
    const only: Condition = {
      param: first.field,
      def: { column: first.def.column, op: 'eq', type: first.def.type, caseInsensitive: folded, description: '' },
      values: [value],
    };
    const part: ListPlan = { filters: [...plan.filters, only], request: { ...plan.request, sort: rest, page: { ...plan.request.page, offset, limit } } };
    const { rows: found } = await listPage(db, source, part);
    rows.push(...found);
    limit -= found.length;
    offset = 0;
  }
  return { rows, total };
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
  requested: ListPlan,
): Promise<{ rows: O[]; total: number }> {
  const plan = withoutFixedKeys(requested);
  const untyped = db as unknown as Kysely<unknown>;
  const shape = shapeOf(plan);
  const whereValues = { ...source.values, ...filterValues(plan.filters) };
  const postgres = isPostgres(untyped);

  // The summary's rows carry the filtered columns, not a base query's scope (only unscoped lists have one).
  if (Object.keys(source.values).length === 0 && summaryCovers(source.summary, plan.filters)) {
    const summary = source.summary;
    const summed = shapeQuery(untyped, `${source.key}|summed|${shape}`, filterValues(plan.filters), () => summedQuery(summary, plan.filters).compile(untyped));
    const [counts] = await run<{ total: unknown; all_rows: unknown }>(untyped, summed);
    const total = Number(counts?.total ?? 0);
    if (plan.request.page.offset >= total) return { rows: [], total };
    const split = await byValue(db, source, plan, total);
    if (split) return split;
    const index = postgres ? undefined : orderIndex(source, plan, total, Number(counts?.all_rows ?? 0));
    const { rows } = postgres ? await stampedPageRows(db, source, plan, shape, whereValues) : await pageRows(db, source, plan, shape, whereValues, index);
    return { rows, total };
  }

  const { rows, stamp } = postgres
    ? await stampedPageRows(db, source, plan, shape, whereValues)
    : await pageRows(db, source, plan, shape, whereValues, undefined);
  const known = totalFromPage(plan, rows.length);
  if (known !== undefined) return { rows, total: known };

  const counting = shapeQuery(untyped, `${source.key}|count|${shape}`, whereValues, () =>
    applyWhere(source.base(), plan.filters)
      .select([sql<number | string | bigint>`count(*)`.as('total'), tableStampSql(source.table).as('stamp')] as never)
      .compile(),
  );
  const total = await cachedTotal(
    db,
    `${counting.sql}\u0000${JSON.stringify(counting.parameters)}`,
    async () => {
      const [row] = await run<{ total?: unknown; stamp?: unknown }>(untyped, counting);
      return { total: Number(row?.total ?? 0), stamp: String(row?.stamp) };
    },
    stamp,
  );
  return { rows, total };
}

export { shapeStats } from './shapes.js';
export type { OrderIndexes } from './page-strategy.js';
