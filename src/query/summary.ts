import { sql, type RawBuilder } from 'kysely';
import type { Condition } from './request.js';
import { allConditions } from './sql.js';
import { param } from '../db/named-params.js';
import { ciKey } from '../db/sql.js';
import { comparisonOf, summaryAnswers, type HeldColumn } from './comparison.js';

// Exact totals that do not walk the matching rows. A summary table holds, per combination of a few
// low-cardinality columns, how many rows of the listed table have them (users_counts: users per
// status, folded country and age, kept by triggers in the writing transaction: migration
// 20261124T0100). A total whose filters all read those columns is the sum of the summary rows the
// same filters select: at most a few thousand rows whatever the table's size, and exact. The
// summary's columns carry the listed table's column names, and each filter's own SQL (query/sql.ts)
// runs on them unchanged, or its test in memory (held-summary.ts), both from its comparison
// (comparison.ts).
//
// Which filters that answers exactly depends on how each column is held: the country is held folded,
// so `lives_in=BRAZIL` (folded) is answered, but an exact `country=Brazil` is not (Brazil and brazil
// are one row there). So a summary declares, per column, its folding and the operators it answers
// (summaryAnswers), and a list with any filter outside that is answered through the index path:
// its page read and its total counted by SQL on the table itself.

export interface Summary {
  /** The summary table: the listed table's columns below, and `n`. */
  table: string;
  /** The columns it counts by, in the order of `holds`. */
  columns: readonly string[];
  /** Per column, how it is held and what it answers. */
  holds: ReadonlyMap<string, HeldColumn>;
}

/** A summary table counting the listed table's rows by `holds`' columns, held and answering as each says. */
export function declareSummary(table: string, holds: Readonly<Record<string, HeldColumn>>): Summary {
  return { table, columns: Object.keys(holds), holds: new Map(Object.entries(holds)) };
}

/** Whether the summary answers every filter exactly (its column, its folding, its operator). */
export function summaryCovers(summary: Summary | undefined, filters: readonly Condition[]): summary is Summary {
  return summary !== undefined && filters.every((c) => summaryAnswers(summary.holds.get(c.def.column), comparisonOf(c)));
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
 * sort order of the values. `folded`: the sort compares text folded (ciKey), so the values are folded
 * and counted together (a column held as it is may hold `Active` and `active`), by code point.
 */
export function summaryValuesQuery(
  summary: Summary,
  column: string,
  folded: boolean,
  direction: 'asc' | 'desc',
  filters: readonly Condition[],
): RawBuilder<{ value: string | number; n: unknown }> {
  const value = folded ? ciKey(column) : sql.ref(column);
  return sql`select ${value} as value, sum(n) as n from ${sql.table(summary.table)} where ${allConditions(filters)}
    group by ${value} having sum(n) > 0 order by ${value} ${sql.raw(direction)}`;
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
  /** The listed table's columns it counts by (the values of `field`): each held folded, answering a prefix only (one range of the folded name). */
  holds: ReadonlyMap<string, HeldColumn>;
  /** A summary that counts every row of the listed table in a few rows (what a page strategy weighs a total against). */
  allRowsFrom: string;
}

/** A prefix summary of `columns` (their names held folded: it answers a prefix of them, nothing else). */
export function declarePrefixSummary(table: string, columns: readonly string[], allRowsFrom: string): PrefixSummary {
  return { table, holds: new Map(columns.map((c) => [c, { fold: 'ascii', ops: ['prefix'] }])), allRowsFrom };
}

/** The filter, when it is the only one and the summary answers it (a prefix of a name it counts). */
export function prefixSummaryCovers(summary: PrefixSummary | undefined, filters: readonly Condition[]): summary is PrefixSummary {
  if (summary === undefined || filters.length !== 1) return false;
  const comparison = comparisonOf(filters[0]!);
  return comparison.op === 'prefix' && summaryAnswers(summary.holds.get(comparison.column), comparison);
}

/** The total of the (only) prefix filter, and the listed table's rows. Binds the names filterValues gives filter 0. */
export function prefixSummedQuery(summary: PrefixSummary, filters: readonly Condition[]): RawBuilder<{ total: unknown; all_rows: unknown }> {
  return sql`select
      (select coalesce(sum(n), 0) from ${sql.table(summary.table)}
        where field = ${sql.lit(filters[0]!.def.column)} and name >= ${param('f0_low')} and name < ${param('f0_high')}) as total,
      (select coalesce(sum(n), 0) from ${sql.table(summary.allRowsFrom)}) as all_rows`;
}
