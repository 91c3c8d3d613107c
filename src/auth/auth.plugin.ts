import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { AppError } from '../errors/index.js';
import { bearerToken, hashToken, sameHash } from './tokens.js';
import { grants, type Scope } from './scopes.js';
import { findTokenByHash } from './token-lookup.js';
import { arrivalOf } from '../db/arrivals.js';

export interface Caller {
  /** Stored token id; null for the CATALOGUE_ADMIN_TOKEN bootstrap token. */
  tokenId: number | null;
  scopes: Scope[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Scope a route needs; routes without one are public. */
    scope?: Scope;
  }
  interface FastifyRequest {
    caller: Caller | null;
  }
}

function unauthorized(message: string, error?: string): AppError {
  const challenge = error ? `Bearer realm="music-catalogue", error="${error}"` : 'Bearer realm="music-catalogue"';
  return new AppError('UNAUTHORIZED', message, undefined, { 'WWW-Authenticate': challenge });
}

/**
 * The scope a route needs, in its OpenAPI operation: machine-readable as the operation's `security`
 * (OpenAPI 3.1 lets a non-OAuth scheme list role names there) and as `x-required-scope` (the document
 * transform also says it in prose). Every route that needs a scope can answer 403: even `read`,
 * which a `metrics` token (GET /metrics and nothing else) does not hold.
 */
function documentScope(route: RouteOptions) {
  const scope = route.config?.scope;
  if (!scope || !route.schema) return;
  const schema = route.schema as Record<string, unknown> & { response?: Record<number, unknown> };
  schema.security = [{ bearerAuth: [scope] }];
  schema['x-required-scope'] = scope;
}

async function authPlugin(app: FastifyInstance) {
  app.addHook('onRoute', documentScope);
  const adminHash = app.config.adminToken ? hashToken(app.config.adminToken) : undefined;

  app.decorateRequest('caller', null);

  async function identify(request: FastifyRequest): Promise<Caller> {
    const header = request.headers.authorization;
    if (!header) throw unauthorized('Authentication is required: send Authorization: Bearer <token>.');
    const token = bearerToken(header);
    if (!token) throw unauthorized('Malformed Authorization header: expected Bearer <token>.', 'invalid_request');
    const hash = hashToken(token);
    if (adminHash && sameHash(hash, adminHash)) return { tokenId: null, scopes: ['admin'] };
    // Lookup is by the hash of a 256-bit secret: timing reveals nothing about any stored token. A
    // request the server numbered reads the row from memory while the tokens table's version, read
    // after it arrived and shared with the requests that arrived with it, is the row's (db/arrivals.ts).
    const arrival = arrivalOf(request.raw);
    const stored = await findTokenByHash(app.db, hash, new Date(), arrival === undefined ? undefined : await app.versionsAfter(arrival));
    if (!stored) throw unauthorized('The token is unknown or revoked.', 'invalid_token');
    if (stored.expired) throw unauthorized('The token has expired.', 'invalid_token');
    return { tokenId: stored.id, scopes: stored.scopes };
  }

  /**
   * No valid token: 401, or 429 while the address is locked out after too many failed attempts. The
   * 429's RateLimit-* state the policy that refused it, the one nearest exhaustion, as the IETF draft
   * has them do when several apply: failed authentications per window, none remaining, reset when
   * Retry-After says (the request budget's fields, set before, would tell the client to go on).
   */
  async function identifyOrLockOut(request: FastifyRequest): Promise<Caller> {
    try {
      return await identify(request);
    } catch (err) {
      const limits = app.rateLimits;
      if (!limits || !(err instanceof AppError) || err.code !== 'UNAUTHORIZED') throw err;
      const wait = await limits.authBlockedFor(request.ip);
      if (wait === 0) throw err;
      throw new AppError('TOO_MANY_REQUESTS', `Too many failed authentication attempts; retry in ${wait} seconds.`, undefined, {
        'Retry-After': String(wait),
        'RateLimit-Limit': String(limits.maxAuthFailures),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(wait),
      });
    }
  }

  app.addHook('onRequest', async (request) => {
    const needed = request.routeOptions.config?.scope;
    if (!needed) return;
    const caller = await identifyOrLockOut(request);
    request.caller = caller;
    if (!grants(caller.scopes, needed)) {
      throw new AppError('FORBIDDEN', `This token lacks the "${needed}" scope needed here.`);
    }
  });
}

export default fp(authPlugin, { name: 'auth', dependencies: ['database', 'rate-limit'] });
