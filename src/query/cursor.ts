import { createHash } from 'node:crypto';
import type { ErrorDetail } from '../errors/index.js';
import { INT_MAX } from './collection.js';

// `after=<cursor>`: where a keyset page starts. The cursor holds the sort-key values of the last row
// the previous page showed (the keys as the SQL compares them: strings folded, id last), so the next
// page is "rows past these keys" (sql.ts pastBoundary, one index range per key): rows inserted or
// deleted before it move nothing, and any depth costs an index seek.
//
// It is opaque (base64url JSON) and checked: a digest over the values and the list it belongs to
// (collection and sort) is part of it, so a cursor edited by hand, cut short, or given to another
// list or sort is 400 instead of a silently different page. The digest is not a secret (no key to
// share between workers and instances): whoever recomputes it can only choose where a page starts,
// which `sort` and a filter already allow.

/** What a key holds: text, or a number (an integer unless `real`). */
export type CursorKey = { string: boolean; real?: boolean };

/** What a cursor belongs to: the collection and the sort keys (with the id tie-break) in order. */
export function cursorScope(collection: string, keys: readonly { column: string; direction: string }[]): string {
  return `${collection}|${keys.map((k) => `${k.column}:${k.direction}`).join(',')}`;
}

const digest = (scope: string, body: string) => createHash('sha256').update(scope).update('\u0000').update(body).digest('base64url').slice(0, 16);

export function encodeCursor(scope: string, values: readonly unknown[]): string {
  const body = Buffer.from(JSON.stringify(values)).toString('base64url');
  return `${body}.${digest(scope, body)}`;
}

const INVALID = 'Not a cursor this list gave: use the after= of a Link next of the same list and sort, unchanged, or after= (empty) to start.';

/** The key values of `text`, or a detail saying it is not a cursor of this list and sort. */
export function decodeCursor(text: string, scope: string, keys: readonly CursorKey[]): { ok: true; values: unknown[] } | { ok: false; detail: ErrorDetail } {
  const fail = { ok: false as const, detail: { field: 'after', invalid: INVALID } };
  const dot = text.indexOf('.');
  if (dot < 0 || text.length > 4096) return fail;
  const body = text.slice(0, dot);
  if (text.slice(dot + 1) !== digest(scope, body)) return fail;
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return fail;
  }
  if (!Array.isArray(values) || values.length !== keys.length) return fail;
  const fits = values.every((v, i) =>
    // No text the tables hold has U+0000 (PostgreSQL's text refuses it: a statement binding it fails, a 500).
    keys[i]!.string
      ? typeof v === 'string' && !v.includes('\u0000')
      : typeof v === 'number' && (keys[i]!.real ? Number.isFinite(v) : Number.isInteger(v) && Math.abs(v) <= INT_MAX),
  );
  return fits ? { ok: true, values } : fail;
}
