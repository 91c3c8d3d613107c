import type { ErrorDetail } from '../errors/index.js';

// Step 1: the raw query string, as sent, into ordered key/value pairs. Done here rather than by the
// framework's parser because `[a,b]` lists, repeated keys and `sort=f:asc,g:desc` must all be seen
// exactly as written.

export interface RawParam {
  key: string;
  value: string;
}

/** The query string of a request URL (without `?` and any fragment). */
export function queryStringOf(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return '';
  const hash = url.indexOf('#', q);
  return url.slice(q + 1, hash < 0 ? undefined : hash);
}

/** The path of a request URL, without the query string. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function decode(text: string): string | undefined {
  // Without `%` or `+` there is nothing to decode (decodeURIComponent returns such text as it is).
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

export function parseQueryString(qs: string): { params: RawParam[]; errors: ErrorDetail[] } {
  const params: RawParam[] = [];
  const errors: ErrorDetail[] = [];
  for (const piece of qs.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const key = decode(eq < 0 ? piece : piece.slice(0, eq));
    const value = decode(eq < 0 ? '' : piece.slice(eq + 1));
    if (key === undefined || value === undefined) {
      errors.push({ field: key ?? 'query', invalid: 'Malformed percent-encoding.' });
      continue;
    }
    params.push({ key, value });
  }
  return { params, errors };
}

/** Encodes a query pair for a Link URL, keeping `[ ] , :` readable (they are safe in a query). */
export function encodePair(key: string, value: string): string {
  return `${encodeQueryText(key)}=${encodeQueryText(value)}`;
}

/** Text encodeURIComponent leaves as it is, with `[ ] , :`: most keys and values, returned without encoding. */
const AS_IS = /^[A-Za-z0-9\-_.!~*'()[\],:]*$/;

function encodeQueryText(s: string): string {
  if (AS_IS.test(s)) return s;
  return encodeURIComponent(s).replace(/%5B/gi, '[').replace(/%5D/gi, ']').replace(/%2C/gi, ',').replace(/%3A/gi, ':');
}
