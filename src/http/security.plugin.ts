import fp from 'fastify-plugin';
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/index.js';
import { MAX_URL_LENGTH } from './limits.js';
import { SECURITY_HEADERS } from './security-headers.js';

/** Headers a browser client may send, and read, across origins. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'Idempotency-Key', 'X-Request-Id'];
const EXPOSED_HEADERS = [
  'Location',
  'ETag',
  'Link',
  'X-Total-Count',
  'X-Request-Id',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
];

/**
 * Security headers (helmet defaults: a strict CSP, nosniff, frame-ancestors, HSTS, ...) on every
 * response, including errors. /docs replaces the CSP with Swagger UI's own static one (hashes of
 * its bundled files), so the docs still render. CORS is closed unless CORS_ORIGINS lists origins.
 */
async function securityPlugin(app: FastifyInstance) {
  const headers = SECURITY_HEADERS;
  // A callback hook, not an async one: it runs on every request and has nothing to wait for.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers);
    if (request.url.length > MAX_URL_LENGTH) {
      done(
        new AppError('URI_TOO_LONG', `The request URL is longer than ${MAX_URL_LENGTH} characters.`, [
          { field: 'url', maxLength: `Must be at most ${MAX_URL_LENGTH} characters.` },
        ]),
      );
      return;
    }
    done();
  });

  const origins = app.config.corsOrigins;
  if (origins.length > 0) {
    await app.register(cors, {
      origin: origins.includes('*') ? '*' : [...origins],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ALLOWED_HEADERS,
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 600,
      strictPreflight: true,
    });
  }
}

export default fp(securityPlugin, { name: 'security' });
