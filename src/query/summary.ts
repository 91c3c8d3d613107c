import { sql, type RawBuilder } from 'kysely';
import type { Condition } from './request.js';
import { allConditions } from './sql.js';
import { param } from '../db/named-params.js';
import { comparisonOf, summaryAnswers, type HeldColumn } from './comparison.js';

// Exact totals that do not walk the matching rows. A summary table holds, per combination of a few
// low-cardinality columns, how many rows of the listed table have them (users_counts: users per
// status, country (its fold and its collation key) and age, kept by triggers in the writing
// transaction: migrations 20261124T0100, 20261126T0100). A total whose filters all read those
// columns is the sum of the summary rows the same filters select: at most a few thousand rows
// whatever the table's size, and exact. The
// summary's columns carry the listed table's column names, and each filter's own SQL (query/sql.ts)
// runs on them unchanged, or its test in memory (held-summary.ts), both from its comparison
// (comparison.ts).
//
// Which filters that answers exactly depends on which stored columns it holds: every comparison names
// the stored column it compares (comparison.ts: `lives_in` the country's fold, `country_fold`; an exact
// country would compare `country`, which the summary does not hold: Brazil and brazil are one row
// there). So a summary declares, per column, the operators it answers (summaryAnswers), and a list
// with any filter outside that is answered through the index path: its page read and its total
// counted by SQL on the table itself.

export interface Summary {
  /** The summary table: the listed table's columns below, and `n`. */
  table: string;
  /** The columns it counts by, in the order of `holds`. */
  columns: readonly string[];
  /** Per column, how it is held and what it answers. */
  holds: ReadonlyMap<string, HeldColumn>;
}

/** A summary table counting the listed table's rows by `holds`' columns (stored columns of the listed table), answering as each says. */
export function declareSummary(table: string, holds: Readonly<Record<string, HeldColumn>>): Summary {
  return { table, columns: Object.keys(holds), holds: new Map(Object.entries(holds)) };
}

/** Whether the summary answers every filter exactly (the stored column it compares, its operator). */
export function summaryCovers(summary: Summary | undefined, filters: readonly Condition[]): summary is Summary {
  if (summary === undefined) return false;
  const holds = (column: string) => summary.holds.has(column);
  return filters.every((c) => {
    const comparison = comparisonOf(c);
    return summaryAnswers(summary.holds.get(comparison.column), comparison, holds);
  });
}

/**
 * One statement over the summary: the total the filters select, and the number of rows in the
 * listed table (what a page strategy weighs the total against, list/sqlite-route.ts). Binds the filters'
 * values, as applyWhere does.
 */
export function summedQuery(summary: Summary, filters: readonly Condition[]): RawBuilder<{ total: unknown; all_rows: unknown }> {
  return sql`select coalesce(sum(case when ${allConditions(filters)} then n else 0 end), 0) as total, coalesce(sum(n), 0) as all_rows
    from ${sql.table(summary.table)}`;
}

/**
 * Every value of `column` the filters select in the summary, with how many rows have it, in the
 * sort order of the values (as a sort compares them: by code point, `binary` naming the collation
 * for text held in the database's own; a collation key is held in it already).
 */
export function summaryValuesQuery(
  summary: Summary,
  column: string,
  binary: boolean,
  direction: 'asc' | 'desc',
  filters: readonly Condition[],
): RawBuilder<{ value: string | number; n: unknown }> {
  const value = sql.ref(column);
  const order = binary ? sql`${value} collate "binary"` : value;
  return sql`select ${value} as value, sum(n) as n from ${sql.table(summary.table)} where ${allConditions(filters)}
    group by ${value} having sum(n) > 0 order by ${order} ${sql.raw(direction)}`;
}

/**
 * A summary of a table's rows per (field, collation key) (users_name_counts: users per first or last
 * name's key, migrations 20261124T0900, 20261126T0100). A prefix filter is a range of keys
 * (query/text.ts prefixRange), so its exact total is the sum of one range of the summary's key: as
 * many rows as distinct names start with the prefix, however many users have them.
 */
export interface PrefixSummary {
  /** The summary table: `field`, `name` (the key, compared by code point), `n`. */
  table: string;
  /** The listed table's key columns it counts (`first_name_key`: field `first_name`), answering a prefix only (one range of keys). */
  holds: ReadonlyMap<string, HeldColumn>;
  /** A summary that counts every row of the listed table in a few rows (what a page strategy weighs a total against). */
  allRowsFrom: string;
}

/** A prefix summary of the key columns of `fields` (`first_name`: its `first_name_key`; it answers a prefix of them, nothing else). */
export function declarePrefixSummary(table: string, fields: readonly string[], allRowsFrom: string): PrefixSummary {
  return { table, holds: new Map(fields.map((f) => [`${f}_key`, { ops: ['prefix'] }])), allRowsFrom };
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
