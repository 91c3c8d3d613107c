import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, type ErrorBodyType, type ErrorCode } from './codes.js';
import { AppError } from './app-error.js';
import { validationDetails, type AjvError } from './validation.js';
import { driverError, isDatabaseUnavailable } from './driver.js';

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

/** Answers with the standard body: every error reply Fastify sends goes through here. */
export function sendError(reply: FastifyReply, status: number, body: ErrorBodyType): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/** The one error handler: every failure leaves through here in the standard body. */
export function errorHandler(this: FastifyInstance, thrown: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) {
  const error = driverError(thrown, request.routeOptions.config) ?? thrown;
  if (error instanceof AppError) {
    if (error.headers) reply.headers(error.headers);
    if (error.statusCode >= 500) request.log.error({ err: error }, error.message);
    return sendError(reply, error.statusCode, errorBody(error.code, error.message, error.details));
  }
  const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) {
    return sendError(reply, 400, errorBody('BAD_REQUEST', 'Request validation failed.', validationDetails(fe.validation, fe.validationContext)));
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
    return sendError(reply, status === 400 || MESSAGE_FOR_STATUS[status] ? status : 400, errorBody(code, message));
  }
  if (isDatabaseUnavailable(error)) {
    request.log.error({ err: error }, 'database unavailable');
    reply.header('Retry-After', '1');
    return sendError(reply, 503, errorBody('SERVICE_UNAVAILABLE', MESSAGE_FOR_STATUS[503]![1]));
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendError(reply, 500, errorBody('INTERNAL_SERVER_ERROR', 'An unexpected error occurred.'));
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

export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply) {
  return sendError(reply, 404, errorBody('NOT_FOUND', 'Route not found.'));
}
