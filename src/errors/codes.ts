import { Type, type Static } from '@sinclair/typebox';

// The error vocabulary: the closed set of codes and the one body every failure is answered with.

/**
 * The closed set of error codes. A code never changes meaning; retired codes stay here commented out
 * rather than being reused.
 */
export const ERROR_CODES = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  REQUEST_TIMEOUT: 408,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** One element of `details`: the offending field plus one rule key holding a human text. */
export type ErrorDetail = { field: string } & Record<string, string>;

export const REQUIRED_TEXT = 'Missing data for required field.';

/**
 * Bounds of the error body (errorBody enforces them). A body may echo what the request named (unknown
 * fields, parameters) and lists its failed rules: without bounds a 1 MiB body of short unknown keys
 * gave an answer many times its size. No real request comes near them.
 */
export const MAX_ERROR_DETAILS = 1000;
export const MAX_ERROR_TEXT = 2048;

export const ErrorBody = Type.Object(
  {
    code: Type.String({ description: 'Upper-case identifier of the error kind.', examples: ['BAD_REQUEST'], pattern: '^[A-Z][A-Z_]*$', maxLength: 64 }),
    message: Type.String({ description: 'Human-readable text.', maxLength: MAX_ERROR_TEXT }),
    details: Type.Optional(
      Type.Array(
        Type.Object(
          {
            field: Type.String({
              maxLength: MAX_ERROR_TEXT,
              description: `The field or parameter (dots for nested fields), its first ${MAX_ERROR_TEXT} characters.`,
            }),
          },
          {
            additionalProperties: Type.String({ maxLength: MAX_ERROR_TEXT }),
            description:
              'One failed rule: the field, plus one key naming the rule (required, type, format, pattern, minimum, maximum, minLength, maxLength, enum, unknown, invalid) with a text.',
          },
        ),
        {
          maxItems: MAX_ERROR_DETAILS,
          description: `Present only for validation failures: every failed rule, up to the first ${MAX_ERROR_DETAILS} (a request failing more is refused all the same).`,
        },
      ),
    ),
  },
  { $id: 'ErrorBody', title: 'ErrorBody', description: 'The one error body used by every failure.' },
);
export type ErrorBodyType = Static<typeof ErrorBody>;

/** The standard body, for every path that answers an error (the handler, the router's failures, raw sockets). */
export function errorBody(code: ErrorCode, message: string, details?: ErrorDetail[]): ErrorBodyType {
  const text = bounded(message);
  return details ? { code, message: text, details: boundedDetails(details) } : { code, message: text };
}

/** The first MAX_ERROR_TEXT characters (code points, as maxLength counts them) of a text. */
function bounded(text: string): string {
  if (text.length <= MAX_ERROR_TEXT) return text;
  const points = Array.from(text);
  return points.length <= MAX_ERROR_TEXT ? text : points.slice(0, MAX_ERROR_TEXT).join('');
}

function boundedDetails(details: ErrorDetail[]): ErrorDetail[] {
  const kept = details.length > MAX_ERROR_DETAILS ? details.slice(0, MAX_ERROR_DETAILS) : details;
  if (kept.every((d) => Object.values(d).every((v) => v.length <= MAX_ERROR_TEXT))) return kept;
  return kept.map((d) => {
    const copy: Record<string, string> = {};
    for (const [key, value] of Object.entries(d)) copy[bounded(key)] = bounded(value);
    return copy as ErrorDetail;
  });
}
