import { sql, type Expression, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Condition, ListRequest } from './request.js';
import { param } from '../db/named-params.js';
import { bindValues, comparisonOf, sqlOf } from './comparison.js';
import { sortKeys, type OrderKey } from './sort.js';

// Where a sort's keys are made (sort.ts, which request.ts reads them from too: no import cycle).
export { sortColumnOf, sortKeys, type OrderKey } from './sort.js';

// Step 3: the plan as SQL, the parts every dialect shares (filters, sort keys, seek arms); each
// dialect's page statements are built from them in list/sqlite.ts and list/postgres.ts. Identifiers
// come only from collection declarations (sql.ref of a declared column); every value is a bound parameter.

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

/**
 * Filters, the sort (names by their collation keys, ties broken by id ascending) and the page (`limit`,
 * `offset`, each bound as `window` makes it: the parameter itself unless told otherwise).
 */
export function applyToSelect<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  plan: ListPlan,
  window: (name: 'limit' | 'offset') => number = param<number>,
): SelectQueryBuilder<DB, TB, O> {
  let out = applyWhere(qb, plan.filters);
  for (const key of orderKeys(plan)) out = out.orderBy(keyExpr(key), key.direction);
  return out.limit(window('limit')).offset(window('offset'));
}

/** The sort keys a page is ordered by, the id tie-breaker included, as applyToSelect orders them. */
export function orderKeys(plan: ListPlan): OrderKey[] {
  return sortKeys(plan.request.sort);
}

/** The SQL a sort key orders by: the column, text by code point on both backends. */
export function keyExpr(key: OrderKey): RawBuilder<unknown> {
  return key.binary ? sql`${sql.ref(key.column)} collate "binary"` : sql`${sql.ref(key.column)}`;
}

/** Seek arm i past the boundary (its sort-key values `after0`, `after1`, ...): keys before i equal the boundary's, key i strictly beyond it. */
export function pastBoundary<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  keys: readonly OrderKey[],
  i: number,
): SelectQueryBuilder<DB, TB, O> {
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

/** Per value of filter `split` (an equality), the base query with every filter, that one value for `split`. */
export function armsOf<DB, TB extends keyof DB>(base: () => SelectQueryBuilder<DB, TB, object>, plan: ListPlan, split: number) {
  return plan.filters[split]!.values.map((_, j) => {
    let qb = base();
    plan.filters.forEach((c, i) => (qb = qb.where(i === split ? condition(c, i, j) : condition(c, i))));
    return qb;
  });
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
