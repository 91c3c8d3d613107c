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

export const ErrorBody = Type.Object(
  {
    code: Type.String({ description: 'Upper-case identifier of the error kind.', examples: ['BAD_REQUEST'] }),
    message: Type.String({ description: 'Human-readable text.' }),
    details: Type.Optional(
      Type.Array(
        Type.Object(
          { field: Type.String() },
          {
            additionalProperties: Type.String(),
            description:
              'One failed rule: the field, plus one key naming the rule (required, type, format, pattern, minimum, maximum, minLength, maxLength, enum, unknown, invalid) with a text.',
          },
        ),
        { description: 'Present only for validation failures.' },
      ),
    ),
  },
  { $id: 'ErrorBody', title: 'ErrorBody', description: 'The one error body used by every failure.' },
);
export type ErrorBodyType = Static<typeof ErrorBody>;

/** The standard body, for every path that answers an error (the handler, the router's failures, raw sockets). */
export function errorBody(code: ErrorCode, message: string, details?: ErrorDetail[]): ErrorBodyType {
  return details ? { code, message, details } : { code, message };
}
