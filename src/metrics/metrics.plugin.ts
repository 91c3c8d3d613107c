import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { writeBatches } from '../db/write-batches.js';
import type { PoolStats } from '../db/connect.js';
import { requestMetrics, type RequestSeries } from './request-metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry;
    /**
     * The request metrics of one (method, status, route): `observe(seconds)` counts one answered
     * request (for answers given outside Fastify's hooks; look the series up once, keep it).
     */
    requestSeries(method: string, statusCode: number, route: string): RequestSeries;
  }
}

/** Requests that matched no route share one label, so unknown URLs cannot grow the series without bound. */
const UNMATCHED = 'unmatched';

/**
 * The process's peak resident memory over its life in bytes (VmHWM of /proc/self/status: what issue 37's
 * 200 MB a worker bounds, which process_resident_memory_bytes, the resident memory now, only samples);
 * undefined where there is no /proc (not Linux).
 */
export function peakResidentBytes(): number | undefined {
  try {
    const kib = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

/**
 * Prometheus metrics, one registry per app (tests build many apps in one process): request counts
 * and latency by route pattern and status, database pool use, and the process defaults.
 */
async function metricsPlugin(app: FastifyInstance) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  app.decorate('metrics', registry);
  new Gauge({
    name: 'process_resident_memory_peak_bytes',
    help: 'Peak resident memory of this process (worker) since it started, in bytes (VmHWM; Linux only).',
    registers: [registry],
    collect() {
      const peak = peakResidentBytes();
      if (peak !== undefined) this.set(peak);
    },
  });

  const requestSeries = requestMetrics(registry);

  const { poolStats } = app.connection;
  if (poolStats) {
    // Only where there is a pool (PostgreSQL); SQLite uses one handle in-process.
    const gauge = (name: string, help: string, read: (s: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read(poolStats()));
        },
      });
    gauge('db_pool_connections', 'Database connections open.', (s) => s.total);
    gauge('db_pool_idle_connections', 'Database connections open and idle.', (s) => s.idle);
    gauge('db_pool_in_use_connections', 'Database connections running a query or transaction now.', (s) => s.total - s.idle);
    gauge('db_pool_waiting_requests', 'Queries waiting for a free database connection.', (s) => s.waiting);
    gauge('db_pool_max_connections', 'Largest number of database connections allowed (PG_POOL_SIZE).', (s) => s.max);
  }

  /**
   * A counter that follows a count kept elsewhere (undefined: not there yet), read at scrape time and
   * moved on by what happened since the last scrape. `from`: the count this app starts at.
   */
  const following = (name: string, help: string, read: () => number | undefined, from = 0) => {
    let seen = from;
    return new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const now = read();
        if (now === undefined) return;
        if (now > seen) this.inc(now - seen);
        seen = now;
      },
    });
  };

  // The response cache (src/http/response-cache.ts, registered after this plugin) keeps its own counts.
  const cacheStats = () => (app as Partial<Pick<FastifyInstance, 'responseCache'>>).responseCache?.stats();
  const cacheGauge = (name: string, help: string, read: (s: NonNullable<ReturnType<typeof cacheStats>>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const stats = cacheStats();
        if (stats) this.set(read(stats));
      },
    });
  following('response_cache_hits_total', 'GETs answered from the response cache.', () => cacheStats()?.hits);
  following('response_cache_stores_total', 'Answers stored in the response cache.', () => cacheStats()?.stores);
  cacheGauge('response_cache_bytes', 'Bytes the response cache holds (bounded by RESPONSE_CACHE_MB).', (s) => s.bytes);
  cacheGauge('response_cache_entries', 'Answers the response cache holds.', (s) => s.entries);

  // Writes sharing a commit (group commit on SQLite, batched INSERTs on PostgreSQL), counted per
  // process: writes / batches is the mean batch size.
  const batches = () => writeBatches.batches;
  const writes = () => writeBatches.writes;
  following('db_write_batches_total', 'Commits of batched writes (POST a song): each carries one or more writes.', batches, batches());
  following('db_batched_writes_total', 'Writes committed in those batches; divided by db_write_batches_total, the mean batch size.', writes, writes());

  // Every 429 of this service is a rate-limit refusal (too many requests, or too many failed
  // authentications from one address): one series an operator can alert on without knowing routes.
  const refusals = new Counter({ name: 'rate_limit_refusals_total', help: 'Requests refused with 429 by rate limiting.', registers: [registry] });

  app.decorate('requestSeries', requestSeries);
  app.addHook('onResponse', (request, reply, done) => {
    requestSeries(request.method, reply.statusCode, request.routeOptions.url ?? UNMATCHED).observe(reply.elapsedTime / 1000);
    if (reply.statusCode === 429) refusals.inc();
    done();
  });
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['database'] });
