import type { IncomingHttpHeaders } from 'node:http';
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';

// The two lines logged for every request, 'incoming request' and 'request completed', written here
// once for both paths that answer requests: Fastify (through the LogController below) and the
// response cache (src/http/response-cache.ts), which answers before Fastify sees the request.

/** What the logger's `req` serializer (Fastify's) reads of a request. */
export interface LoggedRequest {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  host?: string;
  /** The client's address as TRUST_PROXY says; undefined when it is not known. */
  ip?: string;
  socket?: { remotePort?: number };
}

/** `reqId`: given when `log` is not already the request's own child logger. */
export function logIncoming(log: FastifyBaseLogger, req: LoggedRequest, reqId?: string): void {
  log.info(reqId === undefined ? { req } : { reqId, req }, 'incoming request');
}

export function logCompleted(log: FastifyBaseLogger, statusCode: number, responseTimeMs: number, reqId?: string): void {
  const res = { statusCode };
  log.info(reqId === undefined ? { res, responseTime: responseTimeMs } : { reqId, res, responseTime: responseTimeMs }, 'request completed');
}

/** Fastify's per-request lines, written by the functions above (errored requests keep Fastify's own line). */
export class RequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    logIncoming(request.log, request);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error || this.isLogDisabled(request)) return super.requestCompleted(error, request, reply);
    logCompleted(reply.log, reply.statusCode, reply.elapsedTime);
  }
}
