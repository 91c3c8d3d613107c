import { sql, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type SQLite from 'better-sqlite3';
import { allRows, directSqlite } from '../../db/precompiled.js';
import { param } from '../../db/named-params.js';
import { sqliteTableStamp, tableStamp } from '../../db/table-stamps.js';
import { run, shapeOf, shapeQuery, type Executor } from '../shapes.js';
import { boundariesFor, boundaryKey, pageOf, seekWindow } from '../seek.js';
import { throughIndex, type PageRoute } from '../page-strategy.js';
import { applyToSelect, applyWhere, armsOf, keyExpr, orderKeys, pastBoundary, windowValues, type ListPlan } from '../sql.js';
import { whereValuesOf, type ListSource, type StampedRows } from './source.js';

// SQLite: its page statements (built from the plan with the SQL every dialect shares, ../sql.ts) and
// its page reads. With the connection's own handle (outside a transaction) each read is synchronous
// from the version of the listed table to the rows, so no other request's write can come between
// them; inside a transaction the statements queue behind it through Kysely.

/**
 * The page rows on SQLite, and the version of the listed table they were read at. At offset 0, or
 * inside a transaction (no direct handle), one query. Past the first page: first the page's ids
 * from the index alone (seeking from a remembered boundary where there is one), then those rows by
 * id: OFFSET then skips index entries, never rows. `route`: which index, and whether as a merge of
 * arms (page-strategy.ts pageRoute).
 */
export async function sqlitePage<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
  route: PageRoute,
): Promise<StampedRows<O>> {
  const { limit, offset } = plan.request.page;
  const whereValues = whereValuesOf(source, plan);
  const handle = directSqlite(db);
  const { index, split, groupSplit } = route;
  const shape = `${shapeOf(plan)}|${index}`;
  const arms = groupSplit ?? split;
  if (handle && arms !== undefined) {
    // One arm per value of the split filter (or of the second sort key), merged in order (no remembered boundaries).
    const [kind, query] = groupSplit !== undefined ? ['group-split-ids', groupSplitKeysQuery] : ['merged-ids', mergedKeysQuery];
    const stamp = sqliteTableStamp(handle, source.table);
    const idsQuery = shapeQuery(db, `${source.key}|${kind}:${arms}|${shape}`, { ...whereValues, limit, offset, reach: limit + offset }, () =>
      throughIndex(query(source.base, plan, arms).compile(db), source.table, index),
    );
    const page = allRows(handle, idsQuery.sql, idsQuery.parameters);
    return { rows: rowsOf(handle, db, source, page), stamp };
  }
  if (!handle || (offset === 0 && !route.sortsGroups && !route.keysOnly)) {
    const stamp = handle ? sqliteTableStamp(handle, source.table) : await tableStamp(db, source.table);
    const values = { ...whereValues, limit, offset };
    const rows = await run<O>(
      db,
      shapeQuery(db, `${source.key}|page|${shape}`, values, () => throughIndex(applyToSelect(source.rows(), plan).compile(), source.table, index)),
    );
    return { rows, stamp };
  }
  const keys = orderKeys(plan);
  const stamp = sqliteTableStamp(handle, source.table);
  const boundaries = boundariesFor(db, boundaryKey(source, shape, whereValues), stamp);
  const { after, lead, window } = seekWindow(boundaries, offset, limit);
  const idsQuery = shapeQuery(db, `${source.key}|ids${after ? '-seek' : ''}|${shape}`, { ...whereValues, ...windowValues(after, window) }, () =>
    throughIndex(pageKeysQuery(source.base, plan, after !== undefined).compile(db), source.table, index),
  );
  const entries = allRows(handle, idsQuery.sql, idsQuery.parameters);
  const page = pageOf(boundaries, entries, lead, offset, limit, keys.length);
  return { rows: rowsOf(handle, db, source, page), stamp };
}

/**
 * SQLite, cursor style: the entries (ids and sort-key values k0, k1, ...) of the rows past the
 * cursor, up to `limit + 1` (pageKeysQuery, seeking when there is a cursor), the rows of the first
 * `limit` of them, and the version they were read at.
 */
export async function sqliteCursorEntries<DB, TB extends keyof DB, O>(
  db: Executor,
  source: ListSource<DB, TB, O>,
  plan: ListPlan,
): Promise<StampedRows<O> & { entries: Record<string, unknown>[] }> {
  const { limit, after } = plan.request.page;
  const seeking = after !== undefined;
  const values = { ...whereValuesOf(source, plan), ...windowValues(after, { limit: limit + 1, offset: 0 }) };
  const query = shapeQuery(db, `${source.key}|cursor-ids${seeking ? '-seek' : ''}|${shapeOf(plan)}`, values, () =>
    pageKeysQuery(source.base, plan, seeking).compile(db),
  );
  const handle = directSqlite(db);
  if (handle) {
    // Synchronous from the version to the rows: no other request's write comes between them.
    const stamp = sqliteTableStamp(handle, source.table);
    const entries = allRows(handle, query.sql, query.parameters);
    return { entries, rows: rowsOf(handle, db, source, entries.slice(0, limit)), stamp };
  }
  // A transaction holds the connection: the statements queue behind it, in this order.
  const stamp = await tableStamp(db, source.table);
  const entries = await run<Record<string, unknown>>(db, query);
  const page = entries.slice(0, limit);
  const rows = inOrderOf(page, await run<O>(db, byIds(db, source, page)));
  return { entries, rows, stamp };
}

/** SQLite: the rows of a page's entries (ids read from an index), in the entries' order. */
function rowsOf<DB, TB extends keyof DB, O>(handle: SQLite.Database, db: Executor, source: ListSource<DB, TB, O>, page: Record<string, unknown>[]): O[] {
  if (page.length === 0) return [];
  const read = byIds(db, source, page);
  return inOrderOf(page, allRows<O>(handle, read.sql, read.parameters));
}

/** SQLite: the statement reading the rows of entries (ids read from an index). */
function byIds<DB, TB extends keyof DB, O>(db: Executor, source: ListSource<DB, TB, O>, entries: Record<string, unknown>[]) {
  const ids = JSON.stringify(entries.map((e) => e.id));
  return shapeQuery(db, `${source.key}|by-ids`, { ...source.values, ids }, () =>
    source
      .rows()
      .where(sql<SqlBool>`${sql.ref('id')} in (select value from json_each(${param('ids')}))`)
      .compile(),
  );
}

/** The rows in the entries' order. */
function inOrderOf<O>(entries: Record<string, unknown>[], rows: O[]): O[] {
  const byId = new Map(rows.map((r) => [(r as { id: unknown }).id, r]));
  return entries.map((e) => byId.get(e.id)!);
}

/**
 * The ids of a page with their sort-key values (k0, k1, ...: names' collation keys),
 * read from the index alone: the rows themselves are read afterwards, only for the page.
 *
 * Without `after`: the filtered, ordered ids at `window`. With `after` (the sort-key values of a
 * boundary row): the ids after it, as a UNION ALL of one arm per sort key i, "keys before i equal
 * the boundary's, key i strictly beyond it". Each arm is a single index range starting exactly at
 * the boundary (an OR of them would scan every row tying on the first key), in index order, cut to
 * `limit + offset` entries. The arms are disjoint and, taken from the last key to the first, follow
 * one another in the sort order (rows sharing the longest prefix with the boundary come first), so
 * their concatenation is the ordered list: SQLite runs UNION ALL arms in turn and stops at the LIMIT,
 * usually within the first arm. (SQLite only: the caller uses this where a data stamp exists.)
 * Binds the filters' values and windowValues(): `limit`, `offset`, and seeking, `after<i>` and
 * `reach` (limit + offset, each arm's cut).
 */
function pageKeysQuery<DB, TB extends keyof DB>(
  base: () => SelectQueryBuilder<DB, TB, object>,
  plan: ListPlan,
  seeking: boolean,
): RawBuilder<Record<string, unknown>> {
  const keys = orderKeys(plan);
  const expr = (i: number) => keyExpr(keys[i]!);
  /** Selects id and the keys; orders by the keys from `first` on (the ones before are fixed by equality in an arm). */
  const ordered = (qb: SelectQueryBuilder<DB, TB, object>, first = 0) => {
    let out = qb.select([sql.ref('id').as('id'), ...keys.map((_, i) => expr(i).as(`k${i}`))] as never);
    for (let j = first; j < keys.length; j++) out = out.orderBy(expr(j), keys[j]!.direction);
    return out;
  };
  const limit = param<number>('limit');
  const offset = param<number>('offset');
  if (!seeking) {
    // (A builder inside sql`` is parenthesised, which SQLite takes only as a subquery.)
    return sql`select * from ${ordered(applyWhere(base(), plan.filters)).limit(limit).offset(offset)}`;
  }
  const arms = keys
    .map((_, i) => sql`select * from ${ordered(pastBoundary(applyWhere(base(), plan.filters), keys, i), i).limit(param<number>('reach'))}`)
    .reverse();
  return sql`${sql.join(arms, sql` union all `)} limit ${limit} offset ${offset}`;
}

/**
 * SQLite: the ids of a page with their sort-key values, as pageKeysQuery reads them, when filter
 * `split` (an equality with several values) is read one value at a time: one arm per value, each a
 * range of an index led by that column and then in the sort's order, and the arms merged in that
 * order (SQLite runs a UNION ALL with an ORDER BY as a merge of ordered arms, stopping at the LIMIT).
 * Binds the filters' values, `limit` and `offset`.
 */
function mergedKeysQuery<DB, TB extends keyof DB>(
  base: () => SelectQueryBuilder<DB, TB, object>,
  plan: ListPlan,
  split: number,
): RawBuilder<Record<string, unknown>> {
  const keys = orderKeys(plan);
  const arms = armsOf(base, plan, split).map(
    (qb) => sql`select * from ${qb.select([sql.ref('id').as('id'), ...keys.map((k, i) => keyExpr(k).as(`k${i}`))] as never)}`,
  );
  const order = sql.join(keys.map((k, i) => sql`${sql.ref(`k${i}`)} ${sql.raw(k.direction)}`));
  return sql`${sql.join(arms, sql` union all `)} order by ${order} limit ${param('limit')} offset ${param('offset')}`;
}

/**
 * SQLite: the ids of a page sorted by a first key and then a second key with few values (status,
 * country: the summary lists them), when the index gives the first key's order only. Filter `split`
 * is an equality on the second key with its values in the sort's order of that key: one arm per
 * value, each that value's rows in the index's order (first key, then id), cut to `reach` entries,
 * and carrying its rank as k1; the arms merged by (first key, rank, id) are the page's order. Each
 * arm walks only as far as the page reaches, where reading the index in the first key's order sorts
 * whole groups tying on it (a first name's 28,000 users for page 1). Binds the filters' values,
 * `limit`, `offset` and `reach`.
 */
function groupSplitKeysQuery<DB, TB extends keyof DB>(
  base: () => SelectQueryBuilder<DB, TB, object>,
  plan: ListPlan,
  split: number,
): RawBuilder<Record<string, unknown>> {
  const [first] = orderKeys(plan);
  const arms = armsOf(base, plan, split).map((qb, j) => {
    const ordered = qb
      .select([sql.ref('id').as('id'), keyExpr(first!).as('k0'), sql.lit(j).as('k1'), sql.ref('id').as('k2')] as never)
      .orderBy(keyExpr(first!), first!.direction)
      .orderBy(sql.ref('id'), 'asc')
      .limit(param<number>('reach'));
    return sql`select * from ${ordered}`;
  });
  return sql`${sql.join(arms, sql` union all `)} order by ${sql.ref('k0')} ${sql.raw(first!.direction)}, ${sql.ref('k1')}, ${sql.ref('k2')} limit ${param('limit')} offset ${param('offset')}`;
}
