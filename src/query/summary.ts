import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Condition } from './request.js';

// Exact totals that do not walk the matching rows. A summary table holds, per combination of a few
// low-cardinality columns, how many rows of the listed table have them (users_counts: users per
// status, folded country and age, kept by triggers in the writing transaction: migration
// 20261124T0100). A total whose filters all read those columns is the sum of the summary rows the
// same filters select: at most a few thousand rows whatever the table's size, and exact. The
// summary's columns carry the listed table's column names, and any folding a filter applies (the
// case-insensitive country) is already applied to the stored value, where it changes nothing, so
// each filter's own SQL (query/sql.ts) runs on it unchanged.

export interface Summary {
  /** The summary table: the listed table's columns below, and `n`. */
  table: string;
  /** The columns it counts by. */
  columns: readonly string[];
}

/** Whether every filter reads a column the summary counts by. */
export function summaryCovers(summary: Summary | undefined, filters: readonly Condition[]): summary is Summary {
  return summary !== undefined && filters.every((c) => summary.columns.includes(c.def.column));
}

/** The summary table as a base query (no select list), for the filters to narrow. */
export function summaryBase(db: Kysely<unknown>, summary: Summary): SelectQueryBuilder<Record<string, Record<string, unknown>>, string, object> {
  return (db as unknown as Kysely<Record<string, Record<string, unknown>>>).selectFrom(summary.table);
}

/** The total over the summary rows a query selects. */
export const summedTotal = sql<number | string | bigint>`coalesce(sum(n), 0)`;
