import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { AppError } from '../errors/index.js';
import { bearerToken, hashToken } from '../auth/tokens.js';
import { FixedWindowCounter } from './fixed-window.js';
import { RedisWindowCounter, openRedis } from './redis-window.js';

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
   * when it must go through Fastify: it is past the budget and gets its 429 there (which counts it
   * once more; the answer, 429, remaining 0, same reset, is the same), or the counters are in Redis,
   * which an answer given without waiting cannot consult.
   */
  admit(bucket: string): { remaining: number; reset: number } | null;
  /**
   * Seconds an address must wait after too many failed authentications; 0 when it may try. Only a
   * request without a valid token is refused for it (auth/auth.plugin.ts): a valid token always passes.
   */
  authBlockedFor(address: string): Promise<number>;
  /** Failed authentications an address may make per window: the limit its lockout's 429 states. */
  maxAuthFailures: number;
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

  // With REDIS_URL the counters live in Redis, shared by every instance (http/redis-window.ts);
  // otherwise in this process. In-process, one counter serves both @fastify/rate-limit (as its store)
  // and the response cache, so a request answered from the cache counts exactly as one through
  // Fastify. Same fixed windows as @fastify/rate-limit's LocalStore.
  const redis = app.config.redisUrl ? openRedis(app.config.redisUrl, app.log) : null;
  if (redis) {
    app.addHook('onClose', async () => {
      await redis.quit().catch(() => redis.disconnect());
    });
  }
  const local = new FixedWindowCounter(perMinute, WINDOW_MS, MAX_BUCKETS);
  const shared = redis ? new RedisWindowCounter(redis, 'requests', perMinute, WINDOW_MS) : null;
  const store: FastifyRateLimitStore = {
    incr: (key, callback) => {
      if (!shared) return callback(null, local.take(key));
      shared.take(key).then(
        (result) => callback(null, result),
        (err: Error) => callback(err),
      );
    },
    child: () => store,
  };
  await app.register(rateLimit, {
    global: false,
    max: perMinute,
    timeWindow: WINDOW_MS,
    store: function SharedStore() {
      return store;
    } as unknown as FastifyRateLimitStoreCtor,
    // Redis unreachable: serve without the limit rather than fail every request (logged by openRedis).
    skipOnError: true,
    enableDraftSpec: true,
    keyGenerator: bucketKey,
    errorResponseBuilder: (_request, context) =>
      new AppError('TOO_MANY_REQUESTS', `Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`),
  });
  const limit = app.rateLimit();
  const maxFailures = Math.min(perMinute, MAX_AUTH_FAILURES);
  const localFailures = new FixedWindowCounter(maxFailures, WINDOW_MS);
  const sharedFailures = redis ? new RedisWindowCounter(redis, 'auth-failures', maxFailures, WINDOW_MS) : null;
  app.decorate('rateLimits', {
    max: perMinute,
    maxAuthFailures: maxFailures,
    admit(bucket: string) {
      if (shared) return null;
      const { current, ttl } = local.take(bucket);
      return current > perMinute ? null : { remaining: perMinute - current, reset: Math.ceil(ttl / 1000) };
    },
    async authBlockedFor(address: string) {
      if (!sharedFailures) return localFailures.blockedFor(address);
      return sharedFailures.blockedFor(address).catch(() => 0);
    },
  } satisfies RateLimits);

  app.addHook('onRequest', async (request, reply) => {
    if (EXEMPT_ROUTES.has(request.routeOptions.url ?? '')) return;
    await limit.call(app, request, reply);
  });

  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode !== 401) return;
    if (sharedFailures) await sharedFailures.take(request.ip).catch(() => {});
    else localFailures.hit(request.ip);
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
