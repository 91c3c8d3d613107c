import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN, buildTestApp, client, createArtist, deferred, errorBody, type LogEntry, type TestContext } from '../helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

// The outbound address policy (docs/events.md, Outbound addresses): every block of IANA's IPv4 and
// IPv6 special-purpose registries is refused, IPv4 inside IPv6 is unwrapped, and the policy is the
// sending process's own, applied to the address actually connected to at every delivery.

const SECRET = 'a-shared-secret-of-some-length';

// IANA's registries as of 2025 (iana-ipv4-special-registry, iana-ipv6-special-registry), plus IPv4
// multicast and IPv6 outside global unicast: an address in each block (its edges where they matter),
// and the block the refusal must name. Written out here, apart from the code's own table.
const REFUSED: [string, string][] = [
  ['0.0.0.0', '0.0.0.0/8'],
  ['0.255.255.255', '0.0.0.0/8'],
  ['10.0.0.1', '10.0.0.0/8'],
  ['10.255.255.254', '10.0.0.0/8'],
  ['100.64.0.1', '100.64.0.0/10'],
  ['100.127.255.254', '100.64.0.0/10'],
  ['127.0.0.1', '127.0.0.0/8'],
  ['127.255.255.254', '127.0.0.0/8'],
  ['169.254.169.254', '169.254.0.0/16'],
  ['172.16.0.1', '172.16.0.0/12'],
  ['172.31.255.254', '172.16.0.0/12'],
  ['192.0.0.9', '192.0.0.0/24'],
  ['192.0.0.170', '192.0.0.0/24'],
  ['192.0.2.1', '192.0.2.0/24'],
  ['192.31.196.1', '192.31.196.0/24'],
  ['192.52.193.1', '192.52.193.0/24'],
  ['192.88.99.1', '192.88.99.0/24'],
  ['192.168.0.1', '192.168.0.0/16'],
  ['192.175.48.1', '192.175.48.0/24'],
  ['198.18.0.1', '198.18.0.0/15'],
  ['198.19.255.254', '198.18.0.0/15'],
  ['198.51.100.1', '198.51.100.0/24'],
  ['203.0.113.1', '203.0.113.0/24'],
  ['224.0.0.1', '224.0.0.0/4'],
  ['239.255.255.250', '224.0.0.0/4'],
  ['240.0.0.1', '240.0.0.0/4'],
  ['255.255.255.255', '255.255.255.255/32'],
  // Written in the forms URLs take: decimal, hex and short IPv4 are all 127.0.0.1 to the URL parser.
  ['2130706433', '127.0.0.0/8'],
  ['0x7f.1', '127.0.0.0/8'],
  ['[::]', '::/128'],
  ['[::1]', '::1/128'],
  ['[::ffff:127.0.0.1]', '127.0.0.0/8'],
  ['[::ffff:10.1.2.3]', '10.0.0.0/8'],
  ['[::ffff:169.254.169.254]', '169.254.0.0/16'],
  ['[::ffff:0.0.0.0]', '0.0.0.0/8'],
  ['[64:ff9b::169.254.169.254]', '64:ff9b::/96'],
  ['[64:ff9b::10.0.0.1]', '64:ff9b::/96'],
  ['[64:ff9b::8.8.8.8]', '64:ff9b::/96'],
  ['[64:ff9b:1:a9fe:a9:fe00::]', '64:ff9b:1::/48'],
  ['[64:ff9b:1::1]', '64:ff9b:1::/48'],
  ['[100::1]', '100::/64'],
  ['[100::ffff:ffff:ffff:ffff]', '100::/64'],
  ['[100:0:0:1::1]', '100:0:0:1::/64'],
  ['[2001::1]', '2001::/32'],
  ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]', '2001::/32'],
  ['[2001:1::1]', '2001::/23'],
  ['[2001:2::1]', '2001::/23'],
  ['[2001:3::1]', '2001::/23'],
  ['[2001:4:112::1]', '2001::/23'],
  ['[2001:10::1]', '2001::/23'],
  ['[2001:20::1]', '2001::/23'],
  ['[2001:30::1]', '2001::/23'],
  ['[2001:1ff:ffff::1]', '2001::/23'],
  ['[2001:db8::1]', '2001:db8::/32'],
  ['[2002:a00:1::1]', '2002::/16'],
  ['[2002:a9fe:a9fe::1]', '2002::/16'],
  ['[2002:808:808::1]', '2002::/16'],
  ['[2620:4f:8000::1]', '2620:4f:8000::/48'],
  ['[3fff::1]', '3fff::/20'],
  ['[3fff:fff:ffff::1]', '3fff::/20'],
  ['[5f00::1]', '5f00::/16'],
  ['[fc00::1]', 'fc00::/7'],
  ['[fd12:3456::1]', 'fc00::/7'],
  ['[fe80::1]', 'fe80::/10'],
  ['[febf:ffff::1]', 'fe80::/10'],
  ['[ff02::1]', 'ff00::/8'],
  // IPv4-compatible (::a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d), and what else lies outside 2000::/3.
  ['[::127.0.0.1]', '2000::/3'],
  ['[::169.254.169.254]', '2000::/3'],
  ['[::ffff:0:127.0.0.1]', '2000::/3'],
  ['[::ffff:0:a9fe:a9fe]', '2000::/3'],
  ['[fec0::1]', '2000::/3'],
  ['[4000::1]', '2000::/3'],
];

// Next to the refused blocks, and public.
const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '9.255.255.255',
  '11.0.0.1',
  '100.63.255.255',
  '100.128.0.1',
  '128.0.0.1',
  '169.253.255.255',
  '172.15.255.255',
  '172.32.0.1',
  '192.0.1.1',
  '192.0.3.1',
  '192.167.255.255',
  '198.17.255.255',
  '198.20.0.1',
  '223.255.255.254',
  '[::ffff:8.8.8.8]',
  '[2606:4700:4700::1111]',
  '[2001:4860:4860::8888]',
  '[2001:200::1]',
  '[2620:4f:8001::1]',
  '[3fff:1000::1]',
  '[2003::1]',
];

describe('webhook targets at creation (WEBHOOK_ALLOW_PRIVATE off)', () => {
  let strict: TestContext;
  beforeAll(async () => {
    strict = await buildTestApp({ webhookAllowPrivate: false });
  });
  afterAll(() => strict.close());

  it('refuses every special-purpose block of the IPv4 and IPv6 registries, IPv4 inside IPv6 included, naming the block', async () => {
    const api = client(strict.app, strict.tokens.admin);
    for (const [host, block] of REFUSED) {
      const res = await api.post('/webhooks', { url: `http://${host}:8080/x`, types: ['artist.created'], secret: SECRET });
      expect([host, res.statusCode]).toEqual([host, 400]);
      const [detail] = errorBody(res).details ?? [];
      expect([host, detail?.field]).toEqual([host, 'url']);
      expect([host, detail?.target]).toEqual([host, expect.stringContaining(block) as string]);
    }
    for (const host of ['localhost', 'LOCALHOST', 'hooks.localhost', 'localhost.']) {
      const res = await api.post('/webhooks', { url: `http://${host}/x`, types: ['artist.created'], secret: SECRET });
      expect([host, res.statusCode]).toEqual([host, 400]);
    }
  });

  it('accepts public addresses next to those blocks', async () => {
    const api = client(strict.app, strict.tokens.admin);
    for (const host of ALLOWED) {
      const res = await api.post('/webhooks', { url: `https://${host}/hook`, types: ['artist.created'], secret: SECRET });
      expect([host, res.statusCode]).toEqual([host, 201]);
      expect((await api.delete(`/webhooks/${res.json<{ id: number }>().id}`)).statusCode).toBe(204);
    }
  });
});

describe('webhook targets at delivery: the sending process decides, on the address it connects to', () => {
  let database: TestDatabase;
  let receiver: Receiver;
  const apps: FastifyInstance[] = [];
  const logWatchers = new Set<(entry: LogEntry) => void>();

  async function start(allowPrivate: boolean): Promise<FastifyInstance> {
    const config = makeConfig({
      databaseUrl: database.url,
      logLevel: 'silent',
      adminToken: ADMIN_TOKEN,
      rateLimitPerMinute: 0,
      eventsPollMs: 20,
      webhookAllowPrivate: allowPrivate,
      webhookMaxAttempts: 1,
      webhookRetryBaseMs: 10,
    });
    const stream = { write: (line: string) => logWatchers.forEach((w) => w(JSON.parse(line) as LogEntry)) };
    const app = await buildApp(config, { logger: { level: 'debug', stream } });
    await app.ready();
    apps.push(app);
    return app;
  }

  beforeAll(async () => {
    database = await freshDatabase();
    receiver = await startReceiver({ secret: SECRET });
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await receiver.close();
    await database.drop();
  });

  it('refuses a webhook created with WEBHOOK_ALLOW_PRIVATE=on once a process without it sends; resumed where that is on again, nothing lost', async () => {
    const port = new URL(receiver.url).port;
    const targets = {
      literal: `http://127.0.0.1:${port}/hook`,
      mapped: `http://[::ffff:127.0.0.1]:${port}/hook`,
      name: `http://localhost:${port}/hook`,
    };
    const permissive = await start(true);
    let api = client(permissive, ADMIN_TOKEN);
    const ids: Record<string, number> = {};
    for (const [kind, url] of Object.entries(targets)) {
      const res = await api.post('/webhooks', { url, types: ['artist.created'], secret: SECRET });
      expect(res.statusCode).toBe(201);
      ids[kind] = res.json<{ id: number }>().id;
    }
    await permissive.close();

    // Restarted without WEBHOOK_ALLOW_PRIVATE: each delivery's one attempt is refused before anything is sent.
    const strict = await start(false);
    api = client(strict, ADMIN_TOKEN);
    const failing = new Map(Object.values(ids).map((id) => [id, deferred()]));
    const watch = (entry: LogEntry) => entry.msg === 'webhook marked failing' && failing.get(entry.webhook as number)?.resolve();
    logWatchers.add(watch);
    const artist = await createArtist(api, 'Not for loopback');
    await Promise.all([...failing.values()].map((f) => f.promise));
    logWatchers.delete(watch);
    expect(receiver.deliveries).toHaveLength(0);
    const why = {
      literal: 'refused to connect: 127.0.0.1 is loopback (127.0.0.0/8)',
      mapped: 'refused to connect: ::ffff:7f00:1 (IPv4-mapped 127.0.0.1) is loopback (127.0.0.0/8)',
      name: 'refused to connect: localhost resolves to no allowed address',
    };
    for (const [kind, id] of Object.entries(ids)) {
      const log = (await api.get(`/webhooks/${id}/deliveries`)).json<{ outcome: string; status_code: number | null; error: string }[]>();
      expect([kind, log.map((l) => [l.outcome, l.status_code])]).toEqual([kind, [['failed', null]]]);
      expect([kind, log[0]!.error]).toEqual([kind, expect.stringContaining(why[kind as keyof typeof why]) as string]);
      expect((await api.get(`/webhooks/${id}`)).json<{ status: string }>().status).toBe('failing');
    }
    await strict.close();

    // Where private targets are allowed again, resuming delivers what was refused: nothing was lost.
    const again = await start(true);
    api = client(again, ADMIN_TOKEN);
    for (const id of Object.values(ids)) expect((await api.patch(`/webhooks/${id}`, { status: 'active' })).statusCode).toBe(200);
    await receiver.until((r) => r.deliveries.length === 3);
    for (const d of receiver.deliveries) {
      expect(d.verified).toBe(true);
      expect(d.event).toMatchObject({ type: 'artist.created', resource: { id: artist.id } });
    }
  });
});
