import { sql, type Expression, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from './migrations/util.js';

// Case-insensitive text, defined once so SQLite and PostgreSQL give the same answers.
//
// The definition: fold A-Z to a-z (ASCII only), then compare code point by code point.
// - SQLite: lower() folds ASCII only and its BINARY collation compares UTF-8 bytes, which is code
//   point order.
// - PostgreSQL: lower() and ORDER BY follow the column's collation, which defaults to the database
//   locale (en_US sorts "b" before "C" and folds "É" to "é"). Under COLLATE "C" lower() folds ASCII
//   only and comparison is by bytes: exactly SQLite's behaviour, whatever locale the database has.
// Non-ASCII letters are therefore not folded on either backend ("Émile" sorts after "zoe").
//
// Use these for every case-insensitive sort or match on a text column; a bare ORDER BY on text
// sorts differently on the two backends.

type AnyDb = Pick<Kysely<unknown>, 'getExecutor'>;

/** The case-insensitive sort key of a text column: `.orderBy(ciKey(db, 'name'), 'asc')`. */
export function ciKey(db: AnyDb, column: string): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`lower(${sql.ref(column)} collate "C")` : sql<string>`lower(${sql.ref(column)})`;
}

/** Folds A-Z to a-z and nothing else, as both backends' sort key does (JS toLowerCase folds all of Unicode). */
export function asciiLower(value: string): string {
  return value.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

/** `column` equals `value` ignoring ASCII case: `.where(ciEquals(db, 'country', 'brazil'))`. */
export function ciEquals(db: AnyDb, column: string, value: string): Expression<boolean> {
  return sql<boolean>`${ciKey(db, column)} = ${asciiLower(value)}`;
}

/** `column` equals any of `values` ignoring ASCII case; an empty list matches nothing. */
export function ciIn(db: AnyDb, column: string, values: readonly string[]): Expression<boolean> {
  if (values.length === 0) return sql<boolean>`1 = 0`;
  return sql<boolean>`${ciKey(db, column)} in (${sql.join(values.map(asciiLower))})`;
}
