import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';

// Case-insensitive text, defined once so SQLite and PostgreSQL give the same answers.
//
// The definition: fold A-Z to a-z (ASCII only), then compare code point by code point.
// - SQLite: lower() folds ASCII only; the BINARY collation compares UTF-8 bytes (= code points).
// - PostgreSQL: lower() and ORDER BY follow the collation, by default the database locale (en_US
//   sorts "b" before "C" and folds "É" to "é"). Migration 20261122T0002 creates a collation named
//   "binary" with locale C there: lower() then folds ASCII only and comparison is by bytes.
// So `lower(col collate "binary")` is the same SQL text with the same meaning on both backends, and
// these helpers need no dialect. Non-ASCII letters are not folded on either ("Émile" sorts after
// "zoe", "émile" does not match "Émile").
//
// Use them for every case-insensitive sort or match on a text column: a bare ORDER BY on text sorts
// differently on the two backends. Columns are identifiers from an allow-list (or sql.ref of one);
// values are always bound parameters.

type Column = string | Expression<string>;

function ref(column: Column): Expression<unknown> {
  return typeof column === 'string' ? sql.ref(column) : column;
}

/** The case-insensitive sort key of a text column: `.orderBy(ciKey('name'), 'asc')`, then `.orderBy('id')`. */
export function ciKey(column: Column): RawBuilder<string> {
  return sql<string>`lower(${ref(column)} collate "binary")`;
}

/** Folds A-Z to a-z and nothing else, as the sort key does (JS toLowerCase folds all of Unicode). */
export function asciiLower(value: string): string {
  return value.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

/** Code point order, as the BINARY collation compares (UTF-8 bytes); numbers by value. */
export function binaryOrder(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return Buffer.compare(Buffer.from(String(a)), Buffer.from(String(b)));
}

/** `column` equals `value` ignoring ASCII case: `.where(ciEquals('country', 'brazil'))`. */
export function ciEquals(column: Column, value: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`${ciKey(column)} = ${asciiLower(value)}`;
}

/** `column` equals any of `values` ignoring ASCII case; an empty list matches nothing. */
export function ciIn(column: Column, values: readonly string[]): RawBuilder<SqlBool> {
  if (values.length === 0) return sql<SqlBool>`1 = 0`;
  if (values.length === 1) return ciEquals(column, values[0]!);
  return sql<SqlBool>`${ciKey(column)} in (${sql.join(values.map(asciiLower))})`;
}
