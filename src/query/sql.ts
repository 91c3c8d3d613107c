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
): SelectQueryBuilder<DB, TB, O> {
  let out = applyWhere(qb, plan.filters);
  for (const key of plan.request.sort) {
    const col = sql.ref(key.def.column);
    out = out.orderBy(key.def.type === 'string' ? ciKey(key.def.column) : col, key.direction);
  }
  if (!plan.request.sort.some((k) => k.field === 'id')) out = out.orderBy(sql.ref('id'), 'asc');
  return out.limit(plan.request.page.limit).offset(plan.request.page.offset);
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
