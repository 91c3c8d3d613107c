import { sql, type Expression, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Condition, ListRequest } from './request.js';
import type { SortDef } from './collection.js';
import { param } from '../db/named-params.js';
import { bindValues, comparisonOf, sqlOf } from './comparison.js';
import { tableStampSql, type VersionedTable } from '../db/table-stamps.js';

// Step 4: the plan as SQL. Identifiers come only from collection declarations (sql.ref of a declared
// column); every value is a bound parameter.

// What each filter means is comparison.ts: its SQL, the values it binds by name (`f<i>`, `f<i>_<j>`,
// `f<i>_folded`, `f<i>_low`/`f<i>_high` for filter i), its test on a summary's values, and its key.

/** Filter i as SQL; `only`: the j-th value of an equality alone (an arm of mergedKeysQuery). */
function condition(c: Condition, i: number, only?: number): Expression<SqlBool> {
  return sqlOf(comparisonOf(c), i, only);
}

/** The values condition() binds, by name, for these filters in this order. */
export function filterValues(filters: readonly Condition[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  filters.forEach((c, i) => bindValues(comparisonOf(c), i, c.values, out));
  return out;
}

/** Every filter, ANDed, as one expression (true when there is none); binds as applyWhere does. */
export function allConditions(filters: readonly Condition[]): RawBuilder<SqlBool> {
  if (filters.length === 0) return sql<SqlBool>`1 = 1`;
  return sql<SqlBool>`${sql.join(
    filters.map((c, i) => condition(c, i)),
    sql` and `,
  )}`;
}

/** The filters (AND) on a query: the request's own and any that come with it (an alias's). */
export function applyWhere<DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>, filters: readonly Condition[]): SelectQueryBuilder<DB, TB, O> {
  let out = qb;
  filters.forEach((c, i) => (out = out.where(condition(c, i))));
  return out;
}

/** Filters, the sort (names by their collation keys, ties broken by id ascending) and the page (`limit`, `offset`). */
export function applyToSelect<DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>, plan: ListPlan): SelectQueryBuilder<DB, TB, O> {
  let out = applyWhere(qb, plan.filters);
  for (const key of orderKeys(plan)) out = out.orderBy(keyExpr(key), key.direction);
  return out.limit(param<number>('limit')).offset(param<number>('offset'));
}

/**
 * A sort key as the SQL orders by it: the stored column (a name's collation key `<column>_key`,
 * db/collation.ts), whether it holds text, and whether that text is compared as `collate "binary"`
 * (other text; a key column is declared in that collation, and compares so as it is).
 */
export interface OrderKey {
  column: string;
  string: boolean;
  binary: boolean;
  direction: 'asc' | 'desc';
}

/** The sort keys a page is ordered by, the id tie-breaker included, as applyToSelect orders them. */
export function orderKeys(plan: ListPlan): OrderKey[] {
  return sortKeys(plan.request.sort);
}

/** The stored column a sort key orders by: a name field's collation key, else the column. */
export const sortColumnOf = (def: SortDef): string => (def.key ? `${def.column}_key` : def.column);

/** orderKeys of a request's sort. */
export function sortKeys(sort: ListRequest['sort']): OrderKey[] {
  const keys: OrderKey[] = sort.map((k) => ({
    column: sortColumnOf(k.def),
    string: k.def.type === 'string',
    binary: k.def.type === 'string' && k.def.key !== true,
    direction: k.direction,
  }));
  if (!sort.some((k) => k.field === 'id')) keys.push({ column: 'id', string: false, binary: false, direction: 'asc' });
  return keys;
}

/** The SQL a sort key orders by: the column, text by code point on both backends. */
function keyExpr(key: OrderKey): RawBuilder<unknown> {
  return key.binary ? sql`${sql.ref(key.column)} collate "binary"` : sql`${sql.ref(key.column)}`;
}

/** Seek arm i past the boundary (its sort-key values `after0`, `after1`, ...): keys before i equal the boundary's, key i strictly beyond it. */
function pastBoundary<DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>, keys: readonly OrderKey[], i: number): SelectQueryBuilder<DB, TB, O> {
  let out = qb;
  for (let j = 0; j < i; j++) out = out.where(sql<SqlBool>`${keyExpr(keys[j]!)} = ${param(`after${j}`)}`);
  return out.where(sql<SqlBool>`${keyExpr(keys[i]!)} ${sql.raw(keys[i]!.direction === 'asc' ? '>' : '<')} ${param(`after${i}`)}`);
}

/** The values a page statement binds besides the filters': the window, and the boundary it seeks from. */
export function windowValues(after: readonly unknown[] | undefined, window: { limit: number; offset: number }): Record<string, unknown> {
  const out: Record<string, unknown> = { limit: window.limit, offset: window.offset, reach: window.limit + window.offset };
  after?.forEach((v, j) => (out[`after${j}`] = v));
  return out;
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
export function pageKeysQuery<DB, TB extends keyof DB>(
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

/** Per value of filter `split` (an equality), the base query with every filter, that one value for `split`. */
function armsOf<DB, TB extends keyof DB>(base: () => SelectQueryBuilder<DB, TB, object>, plan: ListPlan, split: number) {
  return plan.filters[split]!.values.map((_, j) => {
    let qb = base();
    plan.filters.forEach((c, i) => (qb = qb.where(i === split ? condition(c, i, j) : condition(c, i))));
    return qb;
  });
}

/**
 * SQLite: the ids of a page with their sort-key values, as pageKeysQuery reads them, when filter
 * `split` (an equality with several values) is read one value at a time: one arm per value, each a
 * range of an index led by that column and then in the sort's order, and the arms merged in that
 * order (SQLite runs a UNION ALL with an ORDER BY as a merge of ordered arms, stopping at the LIMIT).
 * Binds the filters' values, `limit` and `offset`.
 */
export function mergedKeysQuery<DB, TB extends keyof DB>(
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
export function groupSplitKeysQuery<DB, TB extends keyof DB>(
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

/** The column carrying the table version a stampedPageQuery was read at. */
export const PAGE_STAMP = 'page_stamp';

/**
 * PostgreSQL: one page of rows with their sort-key values (k0, k1, ...) and the version of the table
 * the statement read (PAGE_STAMP, db/table-stamps.ts: one snapshot for the whole statement), so the
 * page and the boundaries it shows are known to belong to one state of the table, the state the
 * totals are cached under (count-cache.ts). A page with no rows is one row of nulls with the stamp.
 * With `after`, the arms of pageKeysQuery (ids and keys); PostgreSQL does not promise to run
 * UNION ALL arms in turn, so the union (at most `limit + offset` entries per arm) is ordered by the
 * keys before LIMIT/OFFSET, and only then are the page's rows read. With `split` (page-strategy.ts
 * postgresSplit), one arm per value of that filter instead, each cut to `reach` entries in the whole
 * sort order, which PostgreSQL merges (Merge Append) without sorting. Binds the names pageKeysQuery
 * binds (`reach` too when seeking or split).
 */
export function stampedPageQuery<DB, TB extends keyof DB, O>(
  source: { rows: () => SelectQueryBuilder<DB, TB, O>; base: () => SelectQueryBuilder<DB, TB, object>; table: VersionedTable },
  plan: ListPlan,
  seeking: boolean,
  split?: number,
): RawBuilder<Record<string, unknown>> {
  const keys = orderKeys(plan);
  const expr = (i: number) => keyExpr(keys[i]!);
  const withKeys = () => source.rows().select(keys.map((_, i) => expr(i).as(`k${i}`)) as never) as SelectQueryBuilder<DB, TB, O>;
  const order = (alias: string) => sql.join(keys.map((k, i) => sql`${sql.ref(`${alias}.k${i}`)} ${sql.raw(k.direction)}`));
  const id = sql.ref(`${source.table}.id`);
  /** Selects the id and the keys (an index holds them), ordered by the keys from `from` on, cut to `reach` entries. */
  const keysOnly = (qb: SelectQueryBuilder<DB, TB, object>, from = 0) => {
    let out = qb.select([id.as('id'), ...keys.map((_, j) => expr(j).as(`k${j}`))] as never);
    for (let j = from; j < keys.length; j++) out = out.orderBy(expr(j), keys[j]!.direction);
    return sql`${out.limit(param<number>('reach'))}`;
  };
  const merged = (arms: RawBuilder<unknown>[]) =>
    sql`(select arms.id from (${sql.join(arms, sql` union all `)}) as arms order by ${order('arms')} limit ${param('limit')} offset ${param('offset')})`;
  let ids: RawBuilder<unknown>;
  if (split !== undefined) {
    // One arm per value of filter `split`, each in the whole sort order: a Merge Append.
    ids = merged(armsOf(source.base, plan, split).map((qb) => keysOnly(qb)));
  } else if (!seeking) {
    ids = sql`${applyToSelect(source.base().select(id.as('id')) as SelectQueryBuilder<DB, TB, object>, plan)}`;
  } else {
    // Each arm selects the id and the keys only, so that it too is read from an index alone: with
    // whole rows, a boundary 40,000 matches before the page fetched 40,000 rows (96 ms).
    ids = merged(keys.map((_, i) => keysOnly(pastBoundary(applyWhere(source.base(), plan.filters), keys, i), i)).reverse());
  }
  // The page's ids first, then their rows: the ids (and the keys and filters) can be read from an
  // index alone, walking it through the offset, where whole rows would visit the table for every
  // entry walked (or have the planner sort the matches instead); the rows are the page's only. As an
  // array: a generic plan, which does not know the limit, then still fetches the rows by id (with
  // `in (select ...)` it hashed the ids and scanned the table: 182 ms).
  const page = sql`select * from ${withKeys().where(sql<SqlBool>`${id} = any(array(select id from ${ids} as ids))` as never)} as page`;
  return sql`select s.${sql.ref(PAGE_STAMP)}, p.* from (select ${tableStampSql(source.table)} as ${sql.ref(PAGE_STAMP)}) as s left join lateral (${page}) as p on true order by ${order('p')}`;
}

/**
 * What a list route runs: the checked request plus every filter that applies (alias + request).
 * Data, never changed once made (listQuery freezes it): a strategy that reads the page another way
 * (from the end, one value at a time, one arm per value) makes a new plan, and what a read finds
 * (the next cursor) is returned beside the rows (list/page.ts ListResult).
 */
export interface ListPlan {
  readonly request: ListRequest;
  readonly filters: readonly Condition[];
}

/**
 * The total, when the page itself tells it (a short page that is not past the end, or an empty
 * first page), so the count query is skipped.
 */
export function totalFromPage(plan: ListPlan, rowCount: number): number | undefined {
  const { offset, limit } = plan.request.page;
  if (rowCount > 0 && rowCount < limit) return offset + rowCount;
  if (rowCount === 0 && offset === 0) return 0;
  return undefined;
}
