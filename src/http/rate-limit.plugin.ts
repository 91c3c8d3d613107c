import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { AppError } from '../errors.js';
import { bearerToken, hashToken } from '../auth/tokens.js';
import { FixedWindowCounter } from './fixed-window.js';

const WINDOW_MS = 60_000;
/** Failed authentications tolerated per client address per window, at most. */
const MAX_AUTH_FAILURES = 30;
/** Probes for liveness and readiness must never be throttled. */
const EXEMPT_ROUTES = new Set(['/health', '/ready']);
/** Buckets kept at most (tokens and addresses); expired windows go first, then the oldest. */
const MAX_BUCKETS = 10_000;

declare module 'fastify' {
  interface FastifyInstance {
    /** The limits in force, for answers given outside Fastify's hooks (the response cache); null when off. */
    rateLimits: RateLimits | null;
  }
}

/** What the onRequest hook does, for a request answered before Fastify. */
export interface RateLimits {
  max: number;
  /**
   * Counts the request in `bucket` and gives its RateLimit-Remaining and -Reset (seconds), or null
   * when it is past the budget and must get its 429 through Fastify (which counts it once more; the
   * answer, 429, remaining 0, same reset, is the same).
   */
  admit(bucket: string): { remaining: number; reset: number } | null;
  /**
   * Seconds an address must wait after too many failed authentications; 0 when it may try. Only a
   * request without a valid token is refused for it (auth/auth.plugin.ts): a valid token always passes.
   */
  authBlockedFor(address: string): number;
}

/**
 * The bucket of a request: the hash of its bearer token (so one token is limited wherever it
 * comes from, and the secret is never kept), or its address when it sends none.
 */
export function bucketKey(request: Pick<FastifyRequest, 'headers' | 'ip'>): string {
  const token = bearerToken(request.headers.authorization);
  return token ? `token:${hashToken(token)}` : `ip:${request.ip}`;
}

/**
 * RATE_LIMIT_PER_MINUTE requests per token (per address without one), answered beyond that with
 * 429 TOO_MANY_REQUESTS, Retry-After and RateLimit-Limit/-Remaining/-Reset. Failed
 * authentications are counted per address too: past the limit, a request from that address without a
 * valid token gets 429 instead of 401 until the window ends, so guessing tokens is not a way around
 * the limit, while a client with a valid token behind the same address (a NAT, a proxy not
 * configured in TRUST_PROXY) is never locked out. The address is the client's as TRUST_PROXY says.
 * Registered before auth, so throttled requests never cost a token lookup.
 */
async function rateLimitPlugin(app: FastifyInstance) {
  const perMinute = app.config.rateLimitPerMinute;
  if (perMinute === 0) {
    app.decorate('rateLimits', null);
    return;
  }

  // One counter behind both @fastify/rate-limit (as its store) and the response cache, so a request
  // answered from the cache counts exactly as one through Fastify. Same fixed windows as its LocalStore.
  const requests = new FixedWindowCounter(perMinute, WINDOW_MS, MAX_BUCKETS);
  const store: FastifyRateLimitStore = {
    incr: (key, callback) => callback(null, requests.take(key)),
    child: () => store,
  };
  await app.register(rateLimit, {
    global: false,
    max: perMinute,
    timeWindow: WINDOW_MS,
    store: function SharedStore() {
      return store;
    } as unknown as FastifyRateLimitStoreCtor,
    enableDraftSpec: true,
    keyGenerator: bucketKey,
    errorResponseBuilder: (_request, context) =>
      new AppError('TOO_MANY_REQUESTS', `Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`),
  });
  const limit = app.rateLimit();
  const authFailures = new FixedWindowCounter(Math.min(perMinute, MAX_AUTH_FAILURES), WINDOW_MS);
  app.decorate('rateLimits', {
    max: perMinute,
    admit(bucket: string) {
      const { current, ttl } = requests.take(bucket);
      return current > perMinute ? null : { remaining: perMinute - current, reset: Math.ceil(ttl / 1000) };
    },
    authBlockedFor: (address: string) => authFailures.blockedFor(address),
  } satisfies RateLimits);

  app.addHook('onRequest', async (request, reply) => {
    if (EXEMPT_ROUTES.has(request.routeOptions.url ?? '')) return;
    await limit.call(app, request, reply);
  });

  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode === 401) authFailures.hit(request.ip);
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
