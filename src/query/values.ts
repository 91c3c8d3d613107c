import type { ErrorDetail } from '../errors/index.js';
import { prefixRange, searchTerms } from './text.js';
import { INT_MAX, LIST_MAX_ITEMS, VALUE_MAX_LENGTH, type FilterDef } from './collection.js';

// Reading one parameter value. Each reader returns the value or the detail that explains the failure.

export type Read<T> = { ok: true; value: T } | { ok: false; detail: ErrorDetail };

const fail = (field: string, rule: string, text: string): Read<never> => ({ ok: false, detail: { field, [rule]: text } });

/**
 * An integer as a person writes it: digits, no sign but minus, no leading zero, no spaces. The one
 * rule for every integer a request writes: list parameters here, path and query parameters checked
 * by Ajv (src/validation.ts). `Number()` would also take `0x10`, `1e1`, `+10`, `010` and ` 10`.
 */
export const PLAIN_DECIMAL = /^-?(0|[1-9][0-9]*)$/;

export function readInteger(field: string, text: string, min = -INT_MAX, max = INT_MAX): Read<number> {
  if (!PLAIN_DECIMAL.test(text)) return fail(field, 'type', 'Must be integer.');
  const n = Number(text);
  if (n < min) return fail(field, 'minimum', `Must be at least ${min}.`);
  if (n > max) return fail(field, 'maximum', `Must be at most ${max}.`);
  return { ok: true, value: n };
}

/** Characters as the body rules count them (Ajv's maxLength): code points, not UTF-16 units. */
function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** A text value: counted as sent, then compared in NFC (composed and decomposed accents are one text: src/db/collation.ts). */
function readString(field: string, sent: string, def: FilterDef): Read<string> {
  if (sent.length === 0) return fail(field, 'minLength', 'Must not be empty.');
  if (sent.length > VALUE_MAX_LENGTH && codePoints(sent) > VALUE_MAX_LENGTH) return fail(field, 'maxLength', `Must be at most ${VALUE_MAX_LENGTH} characters.`);
  const text = sent.normalize('NFC');
  if (def.values && !def.values.includes(text)) return fail(field, 'enum', `Must be one of: ${def.values.join(', ')}.`);
  if (def.pattern && !new RegExp(def.pattern.regex).test(text)) return fail(field, 'pattern', def.pattern.message);
  if (def.op === 'match' && searchTerms(text).length === 0) return fail(field, 'invalid', 'Must contain at least one letter or digit.');
  if (def.op === 'prefix' && !prefixRange(text))
    return fail(field, 'invalid', 'Must contain a letter, digit, space or symbol: not only accents, control characters or U+10FFFF.');
  return { ok: true, value: text };
}

/** A filter's values: one, or for list filters `[a,b]` meaning any of them. */
export function readFilterValues(field: string, text: string, def: FilterDef): Read<(string | number)[]> {
  let items = [text];
  if (def.list && text.startsWith('[')) {
    if (!text.endsWith(']')) return fail(field, 'invalid', 'A list is written [a,b].');
    items = text
      .slice(1, -1)
      .split(',')
      .map((s) => s.trim());
    if (items.length > LIST_MAX_ITEMS) return fail(field, 'maximum', `Must list at most ${LIST_MAX_ITEMS} values.`);
    if (items.some((s) => s === '')) return fail(field, 'invalid', 'A list is written [a,b] with no empty values.');
  }
  const values: (string | number)[] = [];
  for (const item of items) {
    const read = def.type === 'integer' ? readInteger(field, item) : readString(field, item, def);
    if (!read.ok) return read;
    values.push(read.value);
  }
  return { ok: true, value: values };
}
