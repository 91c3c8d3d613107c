import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN } from '../helpers.js';
import { openStream } from '../events/sse.js';
import { startReceiver, type Receiver } from '../events/receiver.js';

// Two instances over one PostgreSQL database: concurrent transactions commit in any order, yet the
// feed read from either never shows a sequence before every earlier one has committed; streams on
// either see every event; a webhook is never sent one event twice at once.

let database: TestDatabase;
let receiver: Receiver;
const apps: FastifyInstance[] = [];
const urls: string[] = [];
const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

beforeAll(async () => {
  database = await freshDatabase('postgres');
  receiver = await startReceiver();
  for (let i = 0; i < 2; i++) {
    const config = makeConfig({
      databaseUrl: database.url,
      logLevel: 'silent',
      adminToken: ADMIN_TOKEN,
      rateLimitPerMinute: 0,
      pgPoolSize: 6,
      eventsPollMs: 20,
      eventsHeartbeatMs: 50,
      webhookAllowPrivate: true,
    });
    const app = await buildApp(config);
    urls.push(await app.listen({ host: '127.0.0.1', port: 0 }));
    apps.push(app);
  }
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await receiver.close();
  await database.drop();
});

async function post(base: string, path: string, body: unknown): Promise<{ id: number }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: number };
}

/** Concurrent writes of several tables through both instances; resolves with how many events they made. */
async function writeConcurrently(rounds: number): Promise<number> {
  const jobs = Array.from({ length: rounds }, async (_, i) => {
    const a = urls[i % 2]!;
    const b = urls[(i + 1) % 2]!;
    const artist = await post(a, '/artists', { name: `i${i}`, image: 'https://img.example.com/a.jpg' });
    await Promise.all([
      post(b, `/artists/${artist.id}/albums`, { name: `i${i}`, year: 2001, image: 'https://img.example.com/b.jpg' }),
      post(a, '/users', { first_name: 'P', last_name: `Q${i}`, email: `p${i}.${Math.random()}@example.com`, age: 30, status: 'active', country: 'Chile' }),
    ]);
  });
  await Promise.all(jobs);
  return rounds * 3;
}

describe('events across two instances on PostgreSQL', () => {
  it('never lets a reader see a sequence before an earlier one commits, under concurrent writers', async () => {
    let after = 0;
    const seen: number[] = [];
    let writing = true;
    const writes = writeConcurrently(60).finally(() => (writing = false));
    // Read the feed as fast as it answers, alternating instances, while the writers commit out of order.
    for (let i = 0; writing || seen.length < 180; i++) {
      const res = await fetch(`${urls[i % 2]}/events?after=${after}&size=1000`, { headers });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { sequence: number }[];
      for (const e of page) {
        expect(e.sequence, `after ${after}`).toBe(after + 1);
        after = e.sequence;
        seen.push(e.sequence);
      }
      if (!writing && page.length === 0) break;
    }
    expect(await writes).toBe(180);
    expect(seen).toEqual(Array.from({ length: 180 }, (_, i) => i + 1));
  });

  it('brings every event to streams on both instances; a stream cut off on one resumes on the other with no gap or duplicate', async () => {
    // The first test wrote 180 events and nothing since.
    const from = 180;
    const onA = await openStream(`${urls[0]}/events/stream?after=${from}`, ADMIN_TOKEN);
    const onB = await openStream(`${urls[1]}/events/stream?after=${from}`, ADMIN_TOKEN);
    // Cut off while the first half is being written, at whatever event it has reached: up to the
    // half's last one (one chunk may bring them all), never the end, so the resumed stream always has
    // events of its own to bring, the second half's, written while it is open.
    const firstHalf = writeConcurrently(10);
    await onB.until((c) => c.events.length >= 15);
    onB.close();
    const cut = onB.events.at(-1)!.data.sequence;
    const resumed = await openStream(`${urls[0]}/events/stream`, ADMIN_TOKEN, { 'last-event-id': String(cut) });
    const total = from + (await firstHalf) + (await writeConcurrently(10));
    await onA.until((c) => c.events.at(-1)?.data.sequence === total);
    await resumed.until((c) => c.events.at(-1)?.data.sequence === total);
    onA.close();
    resumed.close();
    const expected = Array.from({ length: 60 }, (_, i) => from + 1 + i);
    expect(onA.events.map((e) => e.data.sequence)).toEqual(expected);
    expect([...onB.events, ...resumed.events].map((e) => e.data.sequence)).toEqual(expected);
  });

  it('delivers each event to a webhook once, never two at a time, whichever instance sends', async () => {
    let open = 0;
    let most = 0;
    receiver.answer = (_d, res) => {
      open++;
      most = Math.max(most, open);
      // Answered on the next turn: a second concurrent sender would be caught holding one too.
      setImmediate(() => {
        open--;
        res.writeHead(204).end();
      });
    };
    const hook = await post(urls[0]!, '/webhooks', { url: receiver.url, types: ['artist.created', 'album.created'], secret: 'two-instances-secret' });
    expect(hook.id).toBeGreaterThan(0);
    await writeConcurrently(30);
    await receiver.until((r) => r.deliveries.length >= 60);
    const sequences = receiver.deliveries.map((d) => d.event.sequence);
    expect(new Set(sequences).size).toBe(60);
    expect([...sequences].sort((x, y) => x - y)).toEqual(sequences);
    expect(most).toBe(1);
  });
});
