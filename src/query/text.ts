import { sql, type RawBuilder } from 'kysely';
import { fold, searchedFoldSql } from '../db/collation.js';

// Text filters: the words of a full-text query, and the range a prefix is. Both compare folds
// (src/db/collation.ts): accents and case ignored, the same on both backends.

/** The words of a query, folded: runs of letters and digits. Nothing else of the input reaches the search syntax. */
export function searchTerms(q: string): string[] {
  return (fold(q.normalize('NFC')).match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
}

/** SQLite FTS5: each word as a quoted prefix query, so operators or syntax in the input have no effect. */
export const fts5Match = (terms: readonly string[]) => terms.map((t) => `"${t}"*`).join(' ');

/** PostgreSQL tsquery: each word as a prefix, all required. */
export const tsqueryText = (terms: readonly string[]) => terms.map((t) => `${t}:*`).join(' & ');

/** PostgreSQL: the text the search index holds for a key column (the fold), as the GIN index's expression writes it. */
export function searchedFold(keyColumn: string): RawBuilder<string> {
  return sql<string>`${sql.raw(searchedFoldSql(`"${keyColumn}"`, true))}`;
}

const MAX_CODE_POINT = 0x10ffff;

/**
 * The names starting with `prefix` (accents and case ignored: their folds start with its fold) are
 * those whose collation key k has `low <= k < high`: low is the prefix's fold, high the smallest
 * string above every string that starts with it (the fold without trailing U+10FFFF, its last code
 * point plus one). A key is the name's fold, U+0001 and the name, and both backends compare keys by
 * code point (db/collation.ts), so this is one index range. Undefined when no such string exists:
 * the prefix folds to nothing (only accents, control or format characters) or only to U+10FFFF.
 */
export function prefixRange(prefix: string): { low: string; high: string } | undefined {
  const low = fold(prefix.normalize('NFC'));
  const points = [...low].map((c) => c.codePointAt(0)!);
  while (points.length > 0 && points[points.length - 1] === MAX_CODE_POINT) points.pop();
  if (points.length === 0) return undefined;
  let last = points.pop()! + 1;
  // Surrogate code points are not characters: the next one after U+D7FF is U+E000.
  if (last >= 0xd800 && last <= 0xdfff) last = 0xe000;
  return { low, high: String.fromCodePoint(...points, last) };
}
