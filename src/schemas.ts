import { Type, type TSchema } from '@sinclair/typebox';
import { ErrorBody } from './errors/index.js';

// Schemas shared by every module.

export const ErrorRef = Type.Ref(ErrorBody);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: `details` lists every failed rule.',
  401: 'No valid token (`WWW-Authenticate: Bearer`).',
  403: 'The token lacks the scope this route needs.',
  404: 'The addressed resource does not exist; the message names its kind.',
  405: 'Method not allowed on this path (`Allow` lists the allowed ones).',
  409: 'Conflict with stored data.',
  412: 'If-Match does not match the current ETag; nothing was changed.',
  413: 'Request body larger than the limit.',
  415: 'Unsupported content type; send application/json.',
  429: 'Rate limit exceeded (`Retry-After`).',
  500: 'Unexpected server failure (code and message only).',
  503: 'The database cannot be reached.',
};

/** The standard error responses a route can answer, each pointing at the one ErrorBody schema. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of [...statuses, 500, 503]) {
    out[s] = Type.Ref(ErrorBody, { description: ERROR_DESCRIPTIONS[s] ?? 'Error.' });
  }
  return out;
}

/** Errors every authenticated route can answer. */
export const AUTH_ERRORS = [401, 403, 429] as const;

/** Any query parameter on a route that declares none is an error, not silently ignored. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const Id = Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Identifier assigned by the service.' });

/**
 * A human name: not blank, 1..max characters as sent; stored trimmed (`x-trim`, src/validation.ts).
 */
export function NameString(max: number, description: string) {
  return Type.String({ minLength: 1, maxLength: max, pattern: '\\S', 'x-error-message': 'Must not be blank.', 'x-trim': true, description });
}

export const ImageUrl = Type.String({
  format: 'uri',
  maxLength: 2048,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+',
  'x-error-message': 'Must be an absolute http(s) URL.',
  description: 'Absolute http(s) URL, up to 2048 characters.',
  examples: ['https://images.example.com/cover.jpg'],
});
