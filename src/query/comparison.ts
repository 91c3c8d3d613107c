import { sql, type Expression, type SqlBool } from 'kysely';
import { binaryOrder } from '../db/sql.js';
import { collationKey, fold, foldOfKey } from '../db/collation.js';
import { param } from '../db/named-params.js';
import { fts5Match, prefixRange, searchTerms, searchedFold, tsqueryText } from './text.js';
import type { FilterDef } from './collection.js';
import type { Condition } from './request.js';

// What a filter means, stated once. A condition (a declared filter with a request's values) is first
// normalised into a Comparison: the stored column compared, what the request's values become before
// they are compared with it (themselves, their fold or their collation key: src/db/collation.ts), the
// operator and how many values. Everything that answers a filter reads that and only that: its SQL
// (sqlOf), the values its SQL binds (bindValues), its test on a value a summary holds (testOf),
// whether a summary can answer it at all (summaryAnswers), and the key its statement is kept under
// (fieldsKey: a statement compiled for one comparison is never run for another).
// A new kind of filter is a new field here, and so reaches every one of them.
//
// Every comparison is of a stored column with values made in JavaScript: text is folded or keyed
// before it is compared, never in SQL (neither backend can fold as people read). So a summary that
// holds a column answers any comparison of that column, and a column it does not hold (the exact
// `country`, beside `country_fold` and `country_key`) none.

export interface Comparison {
  /** The stored column compared (a declared identifier, never a request's): `status`, `country_fold`, `name_key`. */
  column: string;
  /**
   * eq: equal to one of the values; gt/lt: greater/less than the value; prefix: starts with the value;
   * match: every word of the value starts a word of the name (the search index).
   */
  op: FilterDef['op'];
  /**
   * What each value becomes before it is compared: itself (text is NFC already: values.ts), its fold
   * (`lives_in`; a prefix, whose range is of folds), or its collation key (an exact name).
   */
  value: 'as-is' | 'fold' | 'key';
  /** How many values (an equality of several is `in (...)`). */
  count: number;
  /**
   * An equality of collation keys also compares this column (the fold) with each key's fold, so that
   * an index led by the fold (a country's users) finds the rows. Same answer.
   */
  probe: string | undefined;
  /** The column is written `collate "binary"`, as a sort by other text orders it (query/sql.ts). Same answer. */
  binary: boolean;
  /** match: how the search index is asked, SQLite's FTS5 or PostgreSQL's tsquery (the backend's syntax). */
  syntax: 'fts5' | 'tsquery' | undefined;
  /** match on SQLite: the kind code of the listed table's rows in the FTS5 index. */
  kind: number | undefined;
}

/** The comparison a condition makes: made for each use, from the declaration, the number of values and the backend. */
export function comparisonOf(c: Condition): Comparison {
  const { column, op, text } = c.def;
  const keyed = op === 'prefix' || op === 'match' || text === 'exact' || text === 'key';
  return {
    column: keyed ? `${column}_key` : text === 'fold' ? `${column}_fold` : column,
    op,
    value: op === 'prefix' || text === 'fold' ? 'fold' : text === 'exact' ? 'key' : 'as-is',
    count: c.values.length,
    probe: op === 'eq' && text === 'key' && c.def.probe === true ? `${column}_fold` : undefined,
    binary: text === 'binary' && op !== 'prefix' && op !== 'match',
    syntax: op !== 'match' ? undefined : c.postgres ? 'tsquery' : 'fts5',
    kind: op === 'match' && !c.postgres ? (c.def.search?.code ?? 0) : undefined,
  };
}

/** What a statement built for the condition is kept under (shapes.ts): fieldsKey of its comparison. */
export function comparisonKeyOf(c: Condition): string {
  return fieldsKey(comparisonOf(c));
}

/**
 * The key of a comparison (or of a sort key, shapes.ts): every field of it, whatever fields it has,
 * so two share a key only when they are the same (and so the same SQL binding the same names). The
 * fields are primitives (test/query/shape-keys.test.ts checks that one key is one statement).
 */
export function fieldsKey(value: object): string {
  let key = '';
  for (const field in value) key += `${String((value as Record<string, unknown>)[field])}:`;
  return key;
}

/**
 * The comparison as SQL, binding its values by the names bindValues gives them (filter i: `f<i>`,
 * `f<i>_<j>` and with a probe `f<i>_<j>_fold`, `f<i>_low`/`f<i>_high`). `only`: one value of an
 * equality (an arm of a merge, the j-th value).
 */
export function sqlOf(c: Comparison, i: number, only?: number): Expression<SqlBool> {
  const col = c.binary ? sql`${sql.ref(c.column)} collate "binary"` : sql.ref(c.column);
  const equal = (j: number) =>
    c.probe !== undefined
      ? sql<SqlBool>`${sql.ref(c.probe)} = ${param(`f${i}_${j}_fold`)} and ${col} = ${param(`f${i}_${j}`)}`
      : sql<SqlBool>`${col} = ${param(`f${i}_${j}`)}`;
  if (only !== undefined) return equal(only);
  switch (c.op) {
    case 'prefix':
      return sql<SqlBool>`${col} >= ${param(`f${i}_low`)} and ${col} < ${param(`f${i}_high`)}`;
    case 'match':
      // The search index over the names' folds (migration 20261126T0100): on SQLite an FTS5 table
      // whose rowid is id * 4 + the kind code; on PostgreSQL a GIN index on to_tsvector('simple', fold).
      if (c.syntax === 'tsquery') return sql<SqlBool>`to_tsvector('simple', ${searchedFold(c.column)}) @@ to_tsquery('simple', ${param(`f${i}`)})`;
      return sql<SqlBool>`${sql.ref('id')} in (select rowid / 4 from search_index where search_index match ${param(`f${i}`)} and rowid % 4 = ${sql.lit(c.kind ?? 0)})`;
    case 'gt':
    case 'lt':
      return sql<SqlBool>`${col} ${sql.raw(c.op === 'gt' ? '>' : '<')} ${param(`f${i}`)}`;
    case 'eq': {
      if (c.count === 1) return equal(0);
      const each = Array.from({ length: c.count }, (_, j) => param(`f${i}_${j}`));
      const all = sql<SqlBool>`${col} in (${sql.join(each)})`;
      if (c.probe === undefined) return all;
      return sql<SqlBool>`${sql.ref(c.probe)} in (${sql.join(Array.from({ length: c.count }, (_, j) => param(`f${i}_${j}_fold`)))}) and ${all}`;
    }
  }
}

/** A value as the comparison compares it: itself, its fold or its collation key. */
export const comparedValue = (c: Comparison, value: string | number): string | number =>
  c.value === 'fold' ? fold(String(value)) : c.value === 'key' ? collationKey(String(value)) : value;

/** Sets, in `out`, the values sqlOf(c, i) binds, by name. */
export function bindValues(c: Comparison, i: number, values: readonly (string | number)[], out: Record<string, unknown>): void {
  switch (c.op) {
    case 'prefix': {
      const range = prefixRange(String(values[0]))!; // checked when the value was read (values.ts)
      out[`f${i}_low`] = range.low;
      out[`f${i}_high`] = range.high;
      return;
    }
    case 'match': {
      const terms = searchTerms(String(values[0]));
      out[`f${i}`] = c.syntax === 'tsquery' ? tsqueryText(terms) : fts5Match(terms);
      return;
    }
    case 'gt':
    case 'lt':
      out[`f${i}`] = comparedValue(c, values[0]!);
      return;
    case 'eq':
      values.forEach((v, j) => {
        const value = comparedValue(c, v);
        out[`f${i}_${j}`] = value;
        if (c.probe !== undefined) out[`f${i}_${j}_fold`] = foldOfKey(String(value));
      });
  }
}

/**
 * What the comparison says of one value of its column, in memory: the answer its SQL gives for a row
 * holding `value` in that column. Numbers compare by value, text by code point (as both backends
 * compare it: collation "binary"). Undefined for full text (only the search index answers it).
 */
export function testOf(c: Comparison, values: readonly (string | number)[]): ((value: unknown) => boolean) | undefined {
  switch (c.op) {
    case 'eq': {
      // With a probe, the key's own fold: equal keys have equal folds.
      const wanted = new Set<unknown>(values.map((v) => comparedValue(c, v)));
      return (v) => wanted.has(v);
    }
    case 'gt':
    case 'lt': {
      const bound = comparedValue(c, values[0]!);
      const sign = c.op === 'gt' ? 1 : -1;
      return (v) => binaryOrder(v, bound) * sign > 0;
    }
    case 'prefix': {
      const range = prefixRange(String(values[0]))!;
      return (v) => binaryOrder(v, range.low) >= 0 && binaryOrder(v, range.high) < 0;
    }
    case 'match':
      return undefined;
  }
}

/** Which comparisons of one of the listed table's stored columns a summary holding it answers. */
export interface HeldColumn {
  /**
   * The operators it answers. gt/lt only on numbers: the in-memory test compares text by code point,
   * and a summary's text columns are held for equality (and a key's prefix).
   */
  ops: readonly Comparison['op'][];
}

/**
 * Whether a summary holding the comparison's column as `held` answers it exactly: it holds the
 * column and declares the operator (and, with a probe, holds the probed column too: its SQL names
 * it). The values are compared as stored on both sides, so no folding can differ.
 */
export function summaryAnswers(held: HeldColumn | undefined, c: Comparison, holds: (column: string) => boolean = () => true): boolean {
  return held !== undefined && held.ops.includes(c.op) && (c.probe === undefined || holds(c.probe));
}
