import { sql, type RawBuilder } from 'kysely';
import type { Condition } from './request.js';
import { allConditions } from './sql.js';
import { param } from '../db/named-params.js';

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

/**
 * One statement over the summary: the total the filters select, and the number of rows in the
 * listed table (what a page strategy weighs the total against, statements.ts). Binds the filters'
 * values, as applyWhere does.
 */
export function summedQuery(summary: Summary, filters: readonly Condition[]): RawBuilder<{ total: unknown; all_rows: unknown }> {
  return sql`select coalesce(sum(case when ${allConditions(filters)} then n else 0 end), 0) as total, coalesce(sum(n), 0) as all_rows
    from ${sql.table(summary.table)}`;
}

/**
 * Every value of `column` the filters select in the summary, with how many rows have it, in the
 * sort order of the values (strings are stored folded, and compared by code point as ciKey sorts).
 */
export function summaryValuesQuery(
  summary: Summary,
  column: string,
  folded: boolean,
  direction: 'asc' | 'desc',
  filters: readonly Condition[],
): RawBuilder<{ value: string | number; n: unknown }> {
  const value = folded ? sql`${sql.ref(column)} collate "binary"` : sql.ref(column);
  return sql`select ${sql.ref(column)} as value, sum(n) as n from ${sql.table(summary.table)} where ${allConditions(filters)}
    group by ${sql.ref(column)} having sum(n) > 0 order by ${value} ${sql.raw(direction)}`;
}

/**
 * A summary of a table's rows per (field, folded text) (users_name_counts: users per first or last
 * name folded as ciKey folds it, migration 20261124T0900). A prefix filter is a range of the folded
 * text (query/text.ts prefixRange), so its exact total is the sum of one range of the summary's key:
 * as many rows as distinct names start with the prefix, however many users have them.
 */
export interface PrefixSummary {
  /** The summary table: `field`, `name` (folded, compared by code point), `n`. */
  table: string;
  /** The listed table's columns it counts by (the values of `field`). */
  columns: readonly string[];
  /** A summary that counts every row of the listed table in a few rows (what a page strategy weighs a total against). */
  allRowsFrom: string;
}

/** The prefix filter, when it is the only filter and the summary counts its column. */
export function prefixSummaryCovers(summary: PrefixSummary | undefined, filters: readonly Condition[]): summary is PrefixSummary {
  return summary !== undefined && filters.length === 1 && filters[0]!.def.op === 'prefix' && summary.columns.includes(filters[0]!.def.column);
}

/** The total of the (only) prefix filter, and the listed table's rows. Binds the names filterValues gives filter 0. */
export function prefixSummedQuery(summary: PrefixSummary, filters: readonly Condition[]): RawBuilder<{ total: unknown; all_rows: unknown }> {
  return sql`select
      (select coalesce(sum(n), 0) from ${sql.table(summary.table)}
        where field = ${sql.lit(filters[0]!.def.column)} and name >= ${param('f0_low')} and name < ${param('f0_high')}) as total,
      (select coalesce(sum(n), 0) from ${sql.table(summary.allRowsFrom)}) as all_rows`;
}
