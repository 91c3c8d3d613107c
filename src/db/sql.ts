// Text compared the same way on SQLite and PostgreSQL: by code point. SQLite's BINARY collation
// compares UTF-8 bytes (code point order); on PostgreSQL, whose ORDER BY and `<` follow the database
// locale (en_US sorts "b" before "C"), migration 20261122T0002 creates a collation named "binary"
// with locale C, which compares bytes. Names are compared through their collation keys, columns
// declared in that collation (src/db/collation.ts); other text a list sorts is written
// `col collate "binary"` (query/sql.ts). This is that order in JavaScript, for what is compared in
// memory (a summary's values, a group split's arms).

/** Code point order, as the BINARY collation compares (UTF-8 bytes); numbers by value. */
export function binaryOrder(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return Buffer.compare(Buffer.from(String(a)), Buffer.from(String(b)));
}
