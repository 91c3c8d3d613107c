import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';

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

export class AppError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = ERROR_CODES[code];
  }
}

export const notFound = (kind: string) => new AppError('NOT_FOUND', `${kind} not found.`);

export function badRequest(details: ErrorDetail[], message = 'The request is invalid.'): AppError {
  return new AppError('BAD_REQUEST', message, details);
}

const MESSAGE_FOR_STATUS: Record<number, [ErrorCode, string]> = {
  400: ['BAD_REQUEST', 'The request is invalid.'],
  401: ['UNAUTHORIZED', 'Authentication is required.'],
  403: ['FORBIDDEN', 'Not allowed.'],
  404: ['NOT_FOUND', 'Route not found.'],
  405: ['METHOD_NOT_ALLOWED', 'Method not allowed.'],
  409: ['CONFLICT', 'Conflict.'],
  412: ['PRECONDITION_FAILED', 'Precondition failed.'],
  413: ['PAYLOAD_TOO_LARGE', 'Request body is too large.'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'Unsupported content type; send application/json.'],
  429: ['TOO_MANY_REQUESTS', 'Too many requests.'],
  503: ['SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly.'],
};

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  /** Present with Ajv's `verbose`; carries our `x-error-message` for patterns. */
  parentSchema?: Record<string, unknown>;
}

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

function fieldName(instancePath: string, part: string | undefined, extra?: string): string {
  const segments = instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) segments.push(extra);
  if (segments.length === 0) return PART_NAMES[part ?? 'body'] ?? 'body';
  return segments.join('.');
}

function ruleText(e: AjvError): [string, string] {
  const p = e.params;
  switch (e.keyword) {
    case 'type':
      return ['type', `Must be ${String(p.type).replace(',', ' or ')}.`];
    case 'format':
      return ['format', `Must be a valid ${p.format === 'uri' ? 'absolute URL' : String(p.format)}.`];
    case 'pattern':
      return ['pattern', String(e.parentSchema?.['x-error-message'] ?? 'Does not match the required pattern.')];
    case 'minimum':
    case 'exclusiveMinimum':
      return ['minimum', `Must be ${e.keyword === 'minimum' ? 'at least' : 'greater than'} ${String(p.limit)}.`];
    case 'maximum':
    case 'exclusiveMaximum':
      return ['maximum', `Must be ${e.keyword === 'maximum' ? 'at most' : 'less than'} ${String(p.limit)}.`];
    case 'minLength':
      return ['minLength', `Must be at least ${characters(p.limit)}.`];
    case 'maxLength':
      return ['maxLength', `Must be at most ${characters(p.limit)}.`];
    case 'minItems':
      return ['minimum', `Must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}.`];
    case 'maxItems':
      return ['maximum', `Must have at most ${String(p.limit)} items.`];
    case 'enum':
      return ['enum', `Must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}.`];
    case 'minProperties':
      return ['required', 'At least one field must be sent.'];
    default:
      return ['invalid', e.message ? `${e.message[0]?.toUpperCase()}${e.message.slice(1)}.` : 'Invalid value.'];
  }
}

/** Ajv errors (all of them) -> the `details` of the standard body. */
export function validationDetails(errors: AjvError[], part: string | undefined): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let detail: ErrorDetail;
    if (e.keyword === 'required') {
      detail = { field: fieldName(e.instancePath, part, String(e.params.missingProperty)), required: REQUIRED_TEXT };
    } else if (e.keyword === 'additionalProperties') {
      const text = part === 'querystring' ? 'Unknown query parameter.' : 'Unknown field.';
      detail = { field: fieldName(e.instancePath, part, String(e.params.additionalProperty)), unknown: text };
    } else if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      continue; // the underlying errors are reported on their own
    } else {
      const [rule, text] = ruleText(e);
      detail = { field: fieldName(e.instancePath, part), [rule]: text } as ErrorDetail;
    }
    const key = JSON.stringify(detail);
    if (!seen.has(key)) {
      seen.add(key);
      details.push(detail);
    }
  }
  return details;
}

function send(reply: FastifyReply, status: number, body: ErrorBodyType): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/** The one error handler: every failure leaves through here in the standard body. */
export function errorHandler(this: FastifyInstance, error: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError) {
    if (error.headers) reply.headers(error.headers);
    if (error.statusCode >= 500) request.log.error({ err: error }, error.message);
    const body: ErrorBodyType = { code: error.code, message: error.message };
    if (error.details) body.details = error.details;
    return send(reply, error.statusCode, body);
  }
  const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) {
    return send(reply, 400, {
      code: 'BAD_REQUEST',
      message: 'Request validation failed.',
      details: validationDetails(fe.validation, fe.validationContext),
    });
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    // A client error first: a client hanging up mid-body fails the body read with ECONNRESET, which is
    // the client's doing (no answer reaches it), not the database's.
    if (request.raw.readableAborted || fe.code === 'ECONNRESET') {
      request.log.info({ code: fe.code }, 'the client closed the connection before its request was received');
    }
    const [code, fallback] = MESSAGE_FOR_STATUS[status] ?? ['BAD_REQUEST', 'The request is invalid.'];
    // Fastify's own client errors (bad JSON, empty body, bad content type) carry safe messages.
    const message = fe.code?.startsWith('FST_') ? clientMessage(fe, fallback) : fallback;
    return send(reply, status === 400 || MESSAGE_FOR_STATUS[status] ? status : 400, { code, message });
  }
  if (isDatabaseUnavailable(error)) {
    request.log.error({ err: error }, 'database unavailable');
    reply.header('Retry-After', '1');
    return send(reply, 503, { code: 'SERVICE_UNAVAILABLE', message: MESSAGE_FOR_STATUS[503]![1] });
  }
  request.log.error({ err: error }, 'unhandled error');
  return send(reply, 500, { code: 'INTERNAL_SERVER_ERROR', message: 'An unexpected error occurred.' });
}

function clientMessage(fe: FastifyError, fallback: string): string {
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'Malformed JSON in request body.';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Request body is empty; send a JSON object.';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is too large.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return fallback;
    default:
      if (fe instanceof SyntaxError) return 'Malformed JSON in request body.';
      return fallback;
  }
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08001',
  '08003',
  '08006',
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
  'SQLITE_IOERR',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('SQLITE_IOERR'))) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  // "timeout expired": node-postgres' client gave up opening its connection (PG_CONNECT_TIMEOUT_MS).
  return /Connection terminated|timeout exceeded when trying to connect|connection timeout|^timeout expired$|Client has encountered a connection error/i.test(
    message,
  );
}

export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply) {
  return send(reply, 404, { code: 'NOT_FOUND', message: 'Route not found.' });
}

function characters(limit: unknown): string {
  return limit === 1 ? '1 character' : `${String(limit)} characters`;
}
