import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PoolStats } from '../db/connect.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry;
    /** Counts one answered request in the request metrics (for answers given outside Fastify's hooks). */
    recordRequest(method: string, statusCode: number, route: string, seconds: number): void;
  }
}

/** Requests that matched no route share one label, so unknown URLs cannot grow the series without bound. */
const UNMATCHED = 'unmatched';

/**
 * Prometheus metrics, one registry per app (tests build many apps in one process): request counts
 * and latency by route pattern and status, database pool use, and the process defaults.
 */
async function metricsPlugin(app: FastifyInstance) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  app.decorate('metrics', registry);

  const labelNames = ['method', 'route', 'status_code'] as const;
  type Label = (typeof labelNames)[number];
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by route pattern and status.', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route pattern and status.',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });

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
    gauge('db_pool_waiting_requests', 'Queries waiting for a free database connection.', (s) => s.waiting);
    gauge('db_pool_max_connections', 'Largest number of database connections allowed (PG_POOL_SIZE).', (s) => s.max);
  }

  // The labelled series of each (method, route, status), looked up once: prom-client hashes a labels
  // object on every call otherwise, a visible cost on a hot path.
  const series = new Map<string, { count: Counter.Internal; time: Histogram.Internal<Label> }>();
  function recordRequest(method: string, statusCode: number, route: string, seconds: number): void {
    const key = `${method} ${statusCode} ${route}`;
    let s = series.get(key);
    if (!s) {
      const labels = { method, route, status_code: String(statusCode) };
      s = { count: requests.labels(labels), time: duration.labels(labels) };
      series.set(key, s);
    }
    s.count.inc();
    s.time.observe(seconds);
  }
  app.decorate('recordRequest', recordRequest);
  app.addHook('onResponse', (request, reply, done) => {
    recordRequest(request.method, reply.statusCode, request.routeOptions.url ?? UNMATCHED, reply.elapsedTime / 1000);
    done();
  });
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['database'] });
