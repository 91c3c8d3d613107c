import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN } from '../helpers.js';
import { captureLogs, LEVEL } from '../logs.js';
import { startProxy, type Proxy } from './proxy.js';

// The events feed polls every EVENTS_POLL_MS while anything listens (streams, webhook deliveries). Through a database outage it logs
// one line when the outage starts and one when it ends, not a warning with a stack at every poll.

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
  const config = makeConfig({
    databaseUrl: viaProxy.toString(),
    adminToken: ADMIN_TOKEN,
    rateLimitPerMinute: 0,
    pgConnectTimeoutMs: 500,
    eventsPollMs: 20,
    logLevel: 'info',
  });
  app = await buildApp(config, { logger: { level: 'info', stream: logs.stream } });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await proxy.close();
  await database.drop();
});

const feedLines = () => logs.lines.filter((l) => String(l.msg).startsWith('reading new events'));

describe('the events feed through a database outage', () => {
  it('logs its start once (warn, no stack) and its end once (info, with the failed polls counted)', async () => {
    // A listener that stays (an event stream ends at an outage, and its client resumes later; the
    // feed polls for every listener of the process, webhook deliveries among them).
    const unsubscribe = await app.events.feed.subscribe({ tokenId: null, push: () => {}, end: () => {} });
    proxy.set('down');
    await logs.next((l) => l.msg === 'reading new events failed; retrying, logged again when it works');
    // Many refused connections while down: the feed polls every 20 ms, a new connection each time.
    await proxy.attempts(40);
    proxy.set('up');
    const back = await logs.next((l) => l.msg === 'reading new events works again');
    unsubscribe();

    expect(feedLines().map((l) => [l.level, l.msg])).toEqual([
      [LEVEL.warn, 'reading new events failed; retrying, logged again when it works'],
      [LEVEL.info, 'reading new events works again'],
    ]);
    expect(back.failures).toBeGreaterThanOrEqual(3);
    expect(feedLines().filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
    expect(typeof feedLines()[0]!.error).toBe('string');
  });
});

const senderLines = () => logs.lines.filter((l) => String(l.msg).startsWith('webhook deliveries'));

describe('the webhook sender through a database outage', () => {
  it('logs its start once (warn, no stack) and its end once (info), with no webhook defined', async () => {
    // The sender's passes poll every EVENTS_POLL_MS whether or not a webhook exists. The outage of
    // the test above may have reached it too: wait until it is over, then count from here.
    const lastFailed = senderLines().findLastIndex((l) => l.level === LEVEL.warn);
    if (
      lastFailed >= 0 &&
      !senderLines()
        .slice(lastFailed)
        .some((l) => l.level === LEVEL.info)
    )
      await logs.next((l) => String(l.msg) === 'webhook deliveries works again' && logs.lines.indexOf(l) > logs.lines.indexOf(senderLines()[lastFailed]!));
    const from = logs.lines.length;
    const before = senderLines().length;
    const fromHere = (msg: string) => logs.next((l) => l.msg === msg && logs.lines.indexOf(l) >= from);
    proxy.set('down');
    await fromHere('webhook deliveries failed; retrying, logged again when it works');
    await proxy.attempts(40);
    proxy.set('up');
    const back = await fromHere('webhook deliveries works again');

    const lines = senderLines().slice(before);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [LEVEL.warn, 'webhook deliveries failed; retrying, logged again when it works'],
      [LEVEL.info, 'webhook deliveries works again'],
    ]);
    expect(back.failures).toBeGreaterThanOrEqual(3);
    expect(lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
  });
});
