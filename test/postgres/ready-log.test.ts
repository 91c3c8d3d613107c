import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN, client, errorBody } from '../helpers.js';
import { captureLogs, LEVEL } from '../logs.js';
import { startProxy, type Proxy } from './proxy.js';

// /ready during an outage: every probe answers 503, but the log says "not ready" once, when it
// starts, and "ready again" once, when it ends; no error and no stack trace per probe.

let database: TestDatabase;
let proxy: Proxy;
let app: FastifyInstance;
const logs = captureLogs();

beforeAll(async () => {
  database = await freshDatabase('postgres');
  const target = new URL(database.url);
  proxy = await startProxy(target.hostname, Number(target.port || 5432));
  const viaProxy = new URL(database.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  const config = makeConfig({ databaseUrl: viaProxy.toString(), adminToken: ADMIN_TOKEN, rateLimitPerMinute: 0, pgConnectTimeoutMs: 500, logLevel: 'info' });
  app = await buildApp(config, { logger: { level: 'info', stream: logs.stream } });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await proxy.close();
  await database.drop();
});

describe('GET /ready through a database outage', () => {
  it('logs the transition to not ready once and back to ready once', async () => {
    // The users index loads in the background after ready and logs when it has: wait for that line, so
    // that it neither falls inside the outage nor among the transitions counted below.
    await logs.next((l) => l.msg === 'users index ready');
    const from = logs.lines.length;
    expect((await client(app).get('/ready')).statusCode).toBe(200);
    proxy.set('down');
    for (let i = 0; i < 5; i++) {
      const res = await client(app).get('/ready');
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(errorBody(res)).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'Not ready: the database cannot be reached.' });
    }
    proxy.set('up');
    expect((await client(app).get('/ready')).statusCode).toBe(200);
    expect((await client(app).get('/ready')).statusCode).toBe(200);

    const transitions = logs.lines.slice(from).filter((l) => /ready/.test(String(l.msg)) && l.msg !== 'request completed' && l.msg !== 'incoming request');
    expect(transitions.map((l) => [l.level, l.msg])).toEqual([
      [LEVEL.warn, 'not ready: the database cannot be reached'],
      [LEVEL.info, 'ready again: the database answers'],
    ]);
    expect(logs.lines.filter((l) => l.level >= LEVEL.error)).toEqual([]);
    expect(logs.lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
  });
});
