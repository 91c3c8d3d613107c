import type { ErrorDetail } from '../errors/index.js';
import { INT_MAX, PAGE_DEFAULT_SIZE, PAGE_MAX_SIZE } from './collection.js';
import type { RawParam } from './parse.js';
import { readInteger } from './values.js';

// Four pagination styles, one at a time: page+size, offset+limit, page+pagesize, and after+size
// (a keyset cursor, cursor.ts; `after=` empty starts at the first row).

export const PAGE_PARAMS = new Set(['page', 'size', 'offset', 'limit', 'pagesize', 'after']);
export type PageStyle = 'size' | 'limit' | 'pagesize' | 'cursor';

export interface Page {
  style: PageStyle;
  offset: number;
  limit: number;
  /** Cursor style: the cursor as sent ('' for the first page); request.ts decodes it against the sort into `after`. */
  cursor?: string;
  /** Cursor style: the sort-key values the page starts after (none on the first page). */
  after?: unknown[];
}

const STYLE_PARAMS: Record<PageStyle, readonly string[]> = {
  size: ['page', 'size'],
  limit: ['offset', 'limit'],
  pagesize: ['page', 'pagesize'],
  cursor: ['after', 'size'],
};
const STYLE_NAMES = 'page+size, offset+limit, page+pagesize or after+size';

/** The style the first pagination parameter implies (`page` alone is page+size unless pagesize follows, `size` alone unless after follows). */
function styleOf(keys: string[]): PageStyle {
  const first = keys[0];
  if (first === 'after' || (first === 'size' && keys[1] === 'after')) return 'cursor';
  if (first === 'offset' || first === 'limit') return 'limit';
  if (first === 'pagesize') return 'pagesize';
  if (first === 'page' && keys.find((k) => k !== 'page') === 'pagesize') return 'pagesize';
  return 'size';
}

export function readPage(params: RawParam[], details: ErrorDetail[]): Page {
  const given = new Map<string, string>();
  for (const p of params) if (!given.has(p.key)) given.set(p.key, p.value);
  const style = styleOf([...given.keys()]);
  const allowed = STYLE_PARAMS[style];
  for (const key of given.keys()) {
    if (!allowed.includes(key)) {
      details.push({
        field: key,
        invalid: `Cannot be combined with ${[...given.keys()].filter((k) => allowed.includes(k)).join(' and ')}; use one style: ${STYLE_NAMES}.`,
      });
    }
  }
  const int = (key: string, min: number, max: number, fallback: number) => {
    const text = given.get(key);
    if (text === undefined || !allowed.includes(key)) return fallback;
    const read = readInteger(key, text, min, max);
    if (read.ok) return read.value;
    details.push(read.detail);
    return fallback;
  };
  if (style === 'limit') {
    const offset = int('offset', 0, INT_MAX, 0);
    return { style, offset, limit: int('limit', 1, PAGE_MAX_SIZE, PAGE_DEFAULT_SIZE) };
  }
  if (style === 'cursor') return { style, offset: 0, limit: int('size', 1, PAGE_MAX_SIZE, PAGE_DEFAULT_SIZE), cursor: given.get('after') ?? '' };
  const page = int('page', 1, INT_MAX, 1);
  const size = int(style, 1, PAGE_MAX_SIZE, PAGE_DEFAULT_SIZE);
  return { style, offset: (page - 1) * size, limit: size };
}
