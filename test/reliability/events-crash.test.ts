import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deferred } from '../helpers.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { startServerProcess, type ServerProcess } from '../process.js';
import { startReceiver, sequencesSeen, type Receiver } from '../events/receiver.js';

// The outbox promise, end to end: the service is killed (SIGKILL) while writers are being acknowledged
// and while a webhook delivery is in flight; after a restart the receiver sees every committed
// event's sequence, and every acknowledged write has its event.

const TOKEN = 'events-crash-admin-token-0123456789';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

let database: TestDatabase;
let receiver: Receiver;
beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await database.drop();
});

const env = () => ({
  DATABASE_URL: database.url,
  CATALOGUE_ADMIN_TOKEN: TOKEN,
  RATE_LIMIT_PER_MINUTE: '0',
  WEBHOOK_ALLOW_PRIVATE: 'on',
  EVENTS_POLL_MS: '50',
  WEBHOOK_RETRY_BASE_MS: '50',
  // The dead process's lease on the webhook lapses after 2 x this + 1 s.
  WEBHOOK_TIMEOUT_MS: '1000',
});

async function post(srv: ServerProcess, path: string, body: unknown): Promise<{ id: number }> {
  const res = await fetch(`${srv.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: number };
}

/** Writes artist, album, song until the server stops answering; records what was acknowledged. */
async function writer(srv: ServerProcess, n: number, acked: { type: string; id: number }[]): Promise<void> {
  try {
    for (let i = 0; ; i++) {
      const artist = await post(srv, '/artists', { name: `w${n} ${i}`, image: 'https://img.example.com/a.jpg' });
      acked.push({ type: 'artist.created', id: artist.id });
      const album = await post(srv, `/artists/${artist.id}/albums`, { name: `w${n} ${i}`, year: 2000, image: 'https://img.example.com/b.jpg' });
      acked.push({ type: 'album.created', id: album.id });
      const song = await post(srv, `/artists/${artist.id}/albums/${album.id}/songs`, { name: `w${n} ${i}`, time: '03:00' });
      acked.push({ type: 'song.created', id: song.id });
    }
  } catch {
    // the kill
  }
}

async function allEvents(srv: ServerProcess): Promise<{ sequence: number; type: string; resource: { id: number } }[]> {
  const out: { sequence: number; type: string; resource: { id: number } }[] = [];
  for (;;) {
    const res = await fetch(`${srv.url}/events?after=${out.at(-1)?.sequence ?? 0}&size=1000`, { headers });
    expect(res.status).toBe(200);
    const page = (await res.json()) as typeof out;
    if (page.length === 0) return out;
    out.push(...page);
  }
}

describe('events survive SIGKILL', () => {
  it('delivers every committed event after a kill during writes and during a delivery', async () => {
    const first = await startServerProcess(env());
    const hook = await post(first, '/webhooks', {
      url: receiver.url,
      types: ['artist.created', 'album.created', 'song.created'],
      secret: 'crash-test-shared-secret',
    });
    expect(hook.id).toBeGreaterThan(0);

    // The 40th delivery is held unanswered: the kill comes while it is in flight and writers write.
    const inFlight = deferred();
    receiver.answer = (_d, res) => {
      if (receiver.deliveries.length === 40) return inFlight.resolve();
      res.writeHead(204).end();
    };
    const acked: { type: string; id: number }[] = [];
    const writers = Array.from({ length: 4 }, (_, n) => writer(first, n, acked));
    await inFlight.promise;
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await Promise.all(writers);
    const heldSequence = receiver.deliveries[39]!.event.sequence;

    receiver.answer = (_d, res) => res.writeHead(204).end();
    const second = await startServerProcess(env());
    try {
      const events = await allEvents(second);
      const sequences = events.map((e) => e.sequence);
      // Gap-free and in order: 1..N.
      expect(sequences).toEqual(sequences.map((_, i) => i + 1));
      // Every acknowledged write has its event.
      const recorded = new Set(events.map((e) => `${e.type} ${e.resource.id}`));
      for (const a of acked) expect(recorded.has(`${a.type} ${a.id}`), `${a.type} ${a.id}`).toBe(true);
      expect(acked.length).toBeGreaterThan(40);

      const last = sequences.at(-1)!;
      await receiver.until((r) => sequencesSeen(r).length === last);
      const seen = sequencesSeen(receiver);
      // Every sequence, first seen in order; the one in flight at the kill was sent again.
      expect(seen).toEqual(sequences);
      expect(receiver.deliveries.filter((d) => d.event.sequence === heldSequence).length).toBeGreaterThanOrEqual(2);
      const log = (await (await fetch(`${second.url}/webhooks/${hook.id}`, { headers })).json()) as { status: string; last_sequence: number };
      expect(log.status).toBe('active');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
