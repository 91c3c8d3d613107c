import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { bearerToken, hashToken } from '../auth/tokens.js';
import { FixedWindowCounter } from './fixed-window.js';

const WINDOW_MS = 60_000;
/** Failed authentications tolerated per client address per window, at most. */
const MAX_AUTH_FAILURES = 30;
/** Probes for liveness and readiness must never be throttled. */
const EXEMPT_ROUTES = new Set(['/health', '/ready']);

/**
 * The bucket of a request: the hash of its bearer token (so one token is limited wherever it
 * comes from, and the secret is never kept), or its address when it sends none.
 */
function bucketKey(request: FastifyRequest): string {
  const token = bearerToken(request.headers.authorization);
  return token ? `token:${hashToken(token)}` : `ip:${request.ip}`;
}

/**
 * RATE_LIMIT_PER_MINUTE requests per token (per address without one), answered beyond that with
 * 429 TOO_MANY_REQUESTS, Retry-After and RateLimit-Limit/-Remaining/-Reset. Failed
 * authentications are counted per address too: past the limit, that address gets 429 on every
 * authenticated route until the window ends, so guessing tokens is not a way around the limit.
 * Registered before auth, so throttled requests never cost a token lookup.
 */
async function rateLimitPlugin(app: FastifyInstance) {
  const perMinute = app.config.rateLimitPerMinute;
  if (perMinute === 0) return;

  await app.register(rateLimit, {
    global: false,
    max: perMinute,
    timeWindow: WINDOW_MS,
    cache: 10_000,
    enableDraftSpec: true,
    keyGenerator: bucketKey,
    errorResponseBuilder: (_request, context) =>
      new AppError('TOO_MANY_REQUESTS', `Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`),
  });
  const limit = app.rateLimit();
  const authFailures = new FixedWindowCounter(Math.min(perMinute, MAX_AUTH_FAILURES), WINDOW_MS);

  app.addHook('onRequest', async (request, reply) => {
    if (EXEMPT_ROUTES.has(request.routeOptions.url ?? '')) return;
    if (request.routeOptions.config?.scope) {
      const wait = authFailures.blockedFor(request.ip);
      if (wait > 0) {
        throw new AppError('TOO_MANY_REQUESTS', `Too many failed authentication attempts; retry in ${wait} seconds.`, undefined, {
          'Retry-After': String(wait),
        });
      }
    }
    await limit.call(app, request, reply);
  });

  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode === 401) authFailures.hit(request.ip);
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
