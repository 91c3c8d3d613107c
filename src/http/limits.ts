import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { FastifyError, FastifyHttpOptions, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { ERROR_CODES, errorBody, sendError, type ErrorCode, type ErrorDetail } from '../errors/index.js';
import { SECURITY_HEADERS } from './security-headers.js';

/** Longest request target accepted (path + query); longer ones get 414 before routing. */
export const MAX_URL_LENGTH = 8 * 1024;
/** Request line plus all headers; Node's parser answers 431 beyond this. */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Connection-level limits of the HTTP server. A slow client (slowloris) gets at most
 * requestTimeoutMs to send its request, and headersTimeout for the headers alone; idle keep-alive
 * sockets are closed after keepAliveTimeoutMs (longer than the usual 60 s of load balancers, so
 * the balancer, not us, closes first and never reuses a socket we are closing).
 */
export function httpServerOptions(config: Pick<Config, 'requestTimeoutMs' | 'keepAliveTimeoutMs'>): FastifyHttpOptions<Server> {
  const requestTimeout = config.requestTimeoutMs;
  return {
    requestTimeout,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // A socket with no traffic at all for this long is dropped, whatever state it is in.
    connectionTimeout: Math.max(requestTimeout, config.keepAliveTimeoutMs) + 5_000,
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: Math.min(requestTimeout, 10_000),
      // Node checks the two timeouts above on this interval (30 s by default, which would double them).
      connectionsCheckingInterval: Math.max(100, Math.min(requestTimeout / 4, 2_000)),
    },
    clientErrorHandler,
    frameworkErrors,
  };
}

/** Failures the router meets before any hook runs (bad percent-encoding, an overlong path segment). */
function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // No onRequest hook has run: the headers every answer carries are set here.
  reply.headers(SECURITY_HEADERS).header('X-Request-Id', request.id);
  const [code, message, details] = routerFailure(error, request);
  void sendError(reply, ERROR_CODES[code], errorBody(code, message, details));
}

function routerFailure(error: FastifyError, request: FastifyRequest): [ErrorCode, string, ErrorDetail[]?] {
  switch (error.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return ['URI_TOO_LONG', 'A path segment is too long.', [{ field: 'path', maxLength: 'A path segment is too long.' }]];
    case 'FST_ERR_BAD_URL':
      return ['BAD_REQUEST', 'Malformed URL.', [{ field: 'path', invalid: 'Invalid percent-encoding.' }]];
    default:
      request.log.error({ err: error }, 'router failure');
      return ['INTERNAL_SERVER_ERROR', 'An unexpected error occurred.'];
  }
}

function errorFor(err: NodeJS.ErrnoException): [ErrorCode, string] {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ['REQUEST_TIMEOUT', 'The request was not received in time.'];
    case 'HPE_HEADER_OVERFLOW':
      return ['REQUEST_HEADER_FIELDS_TOO_LARGE', `The request line and headers exceed ${MAX_HEADER_BYTES} bytes.`];
    default:
      return ['BAD_REQUEST', 'Malformed HTTP request.'];
  }
}

const SECURITY_HEADER_LINES = Object.entries(SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

/**
 * Requests that never reach Fastify (unparsable, headers too large, too slow) still get the
 * standard error body, a request id and the security headers, then the connection is closed. The
 * request was not parsed, so the id is always a new one (a client's X-Request-Id cannot be read).
 */
function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, message] = errorFor(err);
  const status = ERROR_CODES[code];
  const id = randomUUID();
  this.log.debug({ err, reqId: id }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify(errorBody(code, message));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `X-Request-Id: ${id}\r\n${SECURITY_HEADER_LINES}` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
