import { asciiLower } from '../db/sql.js';

// Text filters: the words of a full-text query, and the range a case-insensitive prefix is.

/** The words of a query: runs of letters and digits. Nothing else of the input reaches the search syntax. */
export function searchTerms(q: string): string[] {
  return (q.normalize('NFC').match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
}

/** SQLite FTS5: each word as a quoted prefix query, so operators or syntax in the input have no effect. */
export const fts5Match = (terms: readonly string[]) => terms.map((t) => `"${t}"*`).join(' ');

/** PostgreSQL tsquery: each word as a prefix, all required. */
export const tsqueryText = (terms: readonly string[]) => terms.map((t) => `${t}:*`).join(' & ');

const MAX_CODE_POINT = 0x10ffff;

/**
 * The names starting with `prefix` (ASCII case ignored) are those whose folded key k has
 * `low <= k < high`: low is the folded prefix, high the smallest string above every string that
 * starts with it (the prefix without trailing U+10FFFF, its last code point plus one). Both
 * backends compare the folded key by code point (db/sql.ts), so this is one index range.
 * Undefined when no such string exists (the prefix is only U+10FFFF).
 */
export function prefixRange(prefix: string): { low: string; high: string } | undefined {
  const low = asciiLower(prefix);
  const points = [...low].map((c) => c.codePointAt(0)!);
  while (points.length > 0 && points[points.length - 1] === MAX_CODE_POINT) points.pop();
  if (points.length === 0) return undefined;
  let last = points.pop()! + 1;
  // Surrogate code points are not characters: the next one after U+D7FF is U+E000.
  if (last >= 0xd800 && last <= 0xdfff) last = 0xe000;
  return { low, high: String.fromCodePoint(...points, last) };
}
