import { sql, type Expression, type SqlBool } from 'kysely';
import { asciiLower, binaryOrder, ciKey } from '../db/sql.js';
import { param } from '../db/named-params.js';
import { fts5Match, prefixRange, searchTerms, tsqueryText } from './text.js';
import type { FilterDef } from './collection.js';
import type { Condition } from './request.js';

// What a filter means, stated once. A condition (a declared filter with a request's values) is first
// normalised into a Comparison: the column, how it and the values are compared (as they are, or
// folded), the operator and how many values. Everything that answers a filter reads that and only
// that: its SQL (sqlOf), the values its SQL binds (bindValues), its test on a value a summary holds
// (testOf), whether a summary can answer it at all (summaryAnswers), and the key its statement is
// kept under (fieldsKey: a statement compiled for one comparison is never run for another).
// A new kind of filter is a new field here, and so reaches every one of them.

export interface Comparison {
  /** The column compared (a declared identifier, never a request's). */
  column: string;
  /**
   * eq: equal to one of the values; gt/lt: greater/less than the value; prefix: starts with the value;
   * match: every word of the value starts a word of the column (the search index).
   */
  op: FilterDef['op'];
  /**
   * How the column's value and the filter's values are compared: as they are, or both folded as
   * ciKey folds text (ASCII A-Z to a-z, db/sql.ts): a `caseInsensitive` filter, and a prefix always.
   */
  fold: 'none' | 'ascii';
  /** How many values (an equality of several is `in (...)`). */
  count: number;
  /**
   * An exact equality of one value also says folded(column) = folded(value), so that an index on the
   * folded column (the one the case-insensitive sort reads) narrows the rows first. Same answer.
   */
  foldedProbe: boolean;
  /** match: how the search index is asked, SQLite's FTS5 or PostgreSQL's tsquery (the backend's syntax). */
  syntax: 'fts5' | 'tsquery' | undefined;
  /** match on SQLite: the kind code of the listed table's rows in the FTS5 index. */
  kind: number | undefined;
}

/** The comparison a condition makes: made for each use, from the declaration, the number of values and the backend. */
export function comparisonOf(c: Condition): Comparison {
  const { column, op } = c.def;
  return {
    column,
    op,
    fold: op === 'prefix' || (op !== 'match' && c.def.caseInsensitive === true) ? 'ascii' : 'none',
    count: c.values.length,
    foldedProbe: op === 'eq' && c.def.caseInsensitive !== true && c.def.lowerIndexed === true && c.values.length === 1,
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
 * `f<i>_<j>`, `f<i>_folded`, `f<i>_low`/`f<i>_high`). `only`: one value of an equality (an arm of a
 * merge, the j-th value).
 */
export function sqlOf(c: Comparison, i: number, only?: number): Expression<SqlBool> {
  const col = sql.ref(c.column);
  const key = c.fold === 'ascii' ? ciKey(c.column) : col;
  if (only !== undefined) return sql<SqlBool>`${key} = ${param(`f${i}_${only}`)}`;
  switch (c.op) {
    case 'prefix':
      return sql<SqlBool>`${key} >= ${param(`f${i}_low`)} and ${key} < ${param(`f${i}_high`)}`;
    case 'match':
      // The search index (migrations 20261122T0300, 20261123T0100): on SQLite an FTS5 table whose
      // rowid is id * 4 + the kind code; on PostgreSQL a GIN index on to_tsvector('simple', name).
      if (c.syntax === 'tsquery') return sql<SqlBool>`to_tsvector('simple', ${col}) @@ to_tsquery('simple', ${param(`f${i}`)})`;
      return sql<SqlBool>`${sql.ref('id')} in (select rowid / 4 from search_index where search_index match ${param(`f${i}`)} and rowid % 4 = ${sql.lit(c.kind ?? 0)})`;
    case 'gt':
    case 'lt':
      return sql<SqlBool>`${key} ${sql.raw(c.op === 'gt' ? '>' : '<')} ${param(`f${i}`)}`;
    case 'eq': {
      const each = Array.from({ length: c.count }, (_, j) => param(`f${i}_${j}`));
      const equal = c.count === 1 ? sql<SqlBool>`${key} = ${each[0]}` : sql<SqlBool>`${key} in (${sql.join(each)})`;
      return c.foldedProbe ? sql<SqlBool>`${ciKey(c.column)} = ${param(`f${i}_folded`)} and ${equal}` : equal;
    }
  }
}

/** A value as the comparison compares it (folded, or as it is). */
const keyed = (c: Comparison, value: string | number): string | number => (c.fold === 'ascii' ? asciiLower(String(value)) : value);

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
      out[`f${i}`] = keyed(c, values[0]!);
      return;
    case 'eq':
      values.forEach((v, j) => (out[`f${i}_${j}`] = keyed(c, v)));
      if (c.foldedProbe) out[`f${i}_folded`] = asciiLower(String(values[0]));
  }
}

/**
 * What the comparison says of one value of its column, in memory: the answer its SQL gives for a row
 * holding `value` (already folded when the comparison folds). Numbers compare by value, text by code
 * point (as the binary collation compares: db/sql.ts). Undefined for full text (only the search
 * index answers it).
 */
export function testOf(c: Comparison, values: readonly (string | number)[]): ((value: unknown) => boolean) | undefined {
  switch (c.op) {
    case 'eq': {
      const wanted = new Set<unknown>(values.map((v) => keyed(c, v)));
      return (v) => wanted.has(v);
    }
    case 'gt':
    case 'lt': {
      const bound = keyed(c, values[0]!);
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

/** How a summary holds one of the listed table's columns, and which comparisons of it it can answer. */
export interface HeldColumn {
  /** As the listed table holds it, or folded as ciKey folds text (then only comparisons that fold can be answered from it). */
  fold: 'none' | 'ascii';
  /**
   * The operators it answers. gt/lt only on numbers: text under `<` follows the database's collation
   * unless folded, which the in-memory test (by code point) does not.
   */
  ops: readonly Comparison['op'][];
}

/**
 * Whether a summary holding a column as `held` answers comparison `c` exactly: it declares the
 * operator, and its values are the ones the comparison compares (a column held as it is answers a
 * folded comparison too, folding it; one held folded answers only folded comparisons: an exact
 * `country=Brazil` cannot be told from `brazil` there).
 */
export function summaryAnswers(held: HeldColumn | undefined, c: Comparison): boolean {
  return held !== undefined && held.ops.includes(c.op) && (held.fold === 'none' || c.fold === 'ascii');
}
