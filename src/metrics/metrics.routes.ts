import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AUTH_ERRORS, errors } from '../schemas.js';

export const metricsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/metrics', {
    config: { scope: 'metrics' },
    schema: {
      tags: ['health'],
      operationId: 'getMetrics',
      summary: 'Prometheus metrics (metrics or admin scope)',
      description:
        'Prometheus text exposition format: `http_requests_total` and `http_request_duration_seconds` by method, route pattern and status; ' +
        '`db_pool_*` gauges (PostgreSQL: connections open, idle, in use, waiting requests, maximum); `rate_limit_refusals_total`; `response_cache_*` (hits, stores, bytes, entries); `db_write_batches_total` and `db_batched_writes_total` (writes sharing a commit); the users index (`users_index_*`: `users_index_bytes`, the memory its arrays hold); process metrics, among them `process_resident_memory_bytes` (now) and `process_resident_memory_peak_bytes` (the peak since start, VmHWM: at most 200 MB a worker at 1M users with the users index, docs/query-conventions.md). Each worker answers with the figures of its own process. Needs the `metrics` scope (a token for a Prometheus scraper that reads this and nothing else) or `admin`: it reveals traffic patterns.',
      response: {
        200: {
          description: 'Metrics in Prometheus text format 0.0.4.',
          content: {
            'text/plain': {
              // Bounded: every series is a route pattern (or one label for every unmatched URL) x method x
              // status, or a process or pool metric; no label carries request data. A few hundred
              // series take tens of kilobytes; 16 MiB is far above what the finite label sets allow.
              schema: Type.String({
                maxLength: 16 * 1024 * 1024,
                examples: ['http_requests_total{method="GET",route="/artists/:artist_id",status_code="200"} 3'],
              }),
            },
          },
        },
        ...errors(...AUTH_ERRORS),
      },
    },
    handler: async (_request, reply) => {
      const text = await app.metrics.metrics();
      return reply.type(app.metrics.contentType).send(text);
    },
  });
};
