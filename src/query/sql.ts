import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Condition, ListRequest } from './request.js';
import { cachedTotal } from './count-cache.js';
import { ciEquals, ciIn, ciKey } from '../db/sql.js';

// Step 4: the plan as SQL. Identifiers come only from collection declarations (sql.ref of a declared
// column); every value is a bound parameter.

function condition(c: Condition): Expression<SqlBool> {
  const col = sql.ref(c.def.column);
  const values = c.values;
  if (c.def.op !== 'eq') {
    return sql<SqlBool>`${col} ${sql.raw(c.def.op === 'gt' ? '>' : '<')} ${values[0]}`;
  }
  // Case-insensitive text is defined once, in db/sql.ts, so both backends give the same answers.
  if (c.def.caseInsensitive) return ciIn(c.def.column, values.map(String));
  const exact = values.length === 1 ? sql<SqlBool>`${col} = ${values[0]}` : sql<SqlBool>`${col} in (${sql.join(values)})`;
  if (c.def.lowerIndexed && values.length === 1) {
    return sql<SqlBool>`${ciEquals(c.def.column, String(values[0]))} and ${exact}`;
  }
  return exact;
}

/** The request's filters (AND) on a query; `extra` are conditions that come with it (an alias's). */
export function applyWhere<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  filters: readonly Condition[],
): SelectQueryBuilder<DB, TB, O> {
  let out = qb;
  for (const c of filters) out = out.where(condition(c));
  return out;
}

/** Filters, the sort (ties broken by id ascending, strings case-insensitively) and the page. */
export function applyToSelect<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  plan: ListPlan,
  after?: readonly unknown[],
  window: { limit: number; offset: number } = plan.request.page,
): SelectQueryBuilder<DB, TB, O> {
  let out = applyWhere(qb, plan.filters);
  if (after) out = applySeek(out, plan, after);
  for (const key of plan.request.sort) {
    const col = sql.ref(key.def.column);
    out = out.orderBy(key.def.type === 'string' ? ciKey(key.def.column) : col, key.direction);
  }
  if (!plan.request.sort.some((k) => k.field === 'id')) out = out.orderBy(sql.ref('id'), 'asc');
  return out.limit(window.limit).offset(window.offset);
}

/** The sort keys a page is ordered by, the id tie-breaker included, as applyToSelect orders them. */
export function orderKeys(plan: ListPlan): { column: string; string: boolean; direction: 'asc' | 'desc' }[] {
  const keys = plan.request.sort.map((k) => ({ column: k.def.column, string: k.def.type === 'string', direction: k.direction }));
  if (!plan.request.sort.some((k) => k.field === 'id')) keys.push({ column: 'id', string: false, direction: 'asc' });
  return keys;
}

/**
 * Keyset condition: only rows that come after the row whose sort-key values are `after` (strings
 * already folded as ciKey folds them), in the plan's order. The leading `k1 >= v1` (or <=) lets the
 * index range start at the boundary; the OR of prefixes decides ties exactly.
 * Binds: v1, then for each key i: v1..v(i-1), vi.
 */
export function applySeek<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  plan: ListPlan,
  after: readonly unknown[],
): SelectQueryBuilder<DB, TB, O> {
  const keys = orderKeys(plan);
  const expr = (i: number) => (keys[i]!.string ? ciKey(keys[i]!.column) : sql.ref(keys[i]!.column));
  const lead = sql<SqlBool>`${expr(0)} ${sql.raw(keys[0]!.direction === 'asc' ? '>=' : '<=')} ${after[0]}`;
  const branches = keys.map((key, i) => {
    const equal = keys.slice(0, i).map((_, j) => sql<SqlBool>`${expr(j)} = ${after[j]}`);
    const beyond = sql<SqlBool>`${expr(i)} ${sql.raw(key.direction === 'asc' ? '>' : '<')} ${after[i]}`;
    return sql<SqlBool>`(${sql.join([...equal, beyond], sql` and `)})`;
  });
  return qb.where(sql<SqlBool>`${lead} and (${sql.join(branches, sql` or `)})`);
}

/** How many rows the filters select (the whole list, not the page); exact, cached while nothing changes. */
export async function countRows<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  qb: SelectQueryBuilder<DB, TB, O>,
  plan: ListPlan,
): Promise<number> {
  const query = applyWhere(qb, plan.filters).select(sql<number | string | bigint>`count(*)`.as('total'));
  const compiled = query.compile();
  return cachedTotal(db, JSON.stringify([compiled.sql, compiled.parameters]), async () => {
    const row = await query.executeTakeFirst();
    return Number((row as { total?: unknown } | undefined)?.total ?? 0);
  });
}

/** What a list route runs: the checked request plus every filter that applies (alias + request). */
export interface ListPlan {
  request: ListRequest;
  filters: Condition[];
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
