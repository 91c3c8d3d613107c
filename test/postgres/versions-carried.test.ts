import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ADMIN_TOKEN, buildTestApp, client, createArtist, deferred, watchPgStatements, type TestContext } from '../helpers.js';
import type { VersionsAfter } from '../../src/db/arrivals.js';

// PostgreSQL: a request waits for the tables' versions read after it arrived (db/arrivals.ts), one
// read at a time, shared. A batch of single rows by key (db/pg-keyed.ts) sent while requests wait
// carries the versions in its own statement, and those requests take them from it: no read of their
// own (a round trip each batch, issue 32). Only requests through the server are numbered, so these
// go over HTTP. The read under way is held (its statement waits on a gate) while a request that
// arrived after it began waits and a keyed read goes out: that request needs no read after it.

const ALL_VERSIONS = /^select sum\(artists\) as artists/;

let ctx: TestContext;
let app: FastifyInstance;
let base: string;
let artistIds: number[];
/** Set: the next read of every table's version waits for `gate` (and says so through `reached`). */
let holding: { reached: () => void; gate: Promise<void> } | undefined;
/** Statement texts sent while set. */
let recording: string[] | undefined;
/** Arrival numbers of the calls for versions while set. */
let calls: ((arrival: number | undefined) => void) | undefined;
let unwatch: (() => void) | undefined;

beforeAll(async () => {
  unwatch = watchPgStatements((text, run) => {
    recording?.push(text);
    const hold = holding;
    if (hold && ALL_VERSIONS.test(text)) {
      holding = undefined;
      hold.reached();
      return hold.gate.then(run);
    }
    return run();
  });
  ctx = await buildTestApp();
  app = ctx.app;
  const writer = client(app, ctx.tokens.write);
  artistIds = [];
  for (let i = 0; i < 4; i++) artistIds.push((await createArtist(writer, `Carried ${i}`)).id);
  const versionsAfter: VersionsAfter = app.versionsAfter;
  app.versionsAfter = (arrival) => (calls?.(arrival), versionsAfter(arrival));
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  expect((app.server.address() as AddressInfo).port).toBeGreaterThan(0);
});
afterAll(async () => {
  unwatch?.();
  await ctx.close();
});

const get = (path: string, token: string) => fetch(base + path, { headers: { authorization: `Bearer ${token}` } });

describe('versions carried by a keyed read on PostgreSQL', () => {
  it('a request that arrived during a read of the versions is answered from a keyed read that carried them', async () => {
    const read = ctx.tokens.read;
    // The token row held (and every statement prepared) first.
    expect((await get(`/artists/${artistIds[3]}`, read)).status).toBe(200);

    const reached = deferred();
    const gate = deferred();
    holding = { reached: reached.resolve, gate: gate.promise };
    recording = [];
    const first = get(`/artists/${artistIds[0]}`, read);
    await reached.promise; // its read of the versions is under way, held

    // A second request arrives after that read began: it may not use it, and waits.
    const waits = deferred<number>();
    calls = (arrival) => arrival !== undefined && waits.resolve(arrival);
    const second = get(`/artists/${artistIds[1]}`, read);
    await waits.promise;
    calls = undefined;

    // A request whose token needs no versions (the bootstrap admin token) reads an artist by key:
    // its statement carries the versions, and the second request takes them.
    const third = await get(`/artists/${artistIds[2]}`, ADMIN_TOKEN);
    expect(third.status).toBe(200);
    gate.resolve();
    const answers = await Promise.all([first, second]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(((await answers[1].json()) as { name: string }).name).toBe('Carried 1');
    const sent = recording;
    recording = undefined;
    // One read of the versions of its own (the held one), the other carried.
    expect(
      sent.filter((text) => ALL_VERSIONS.test(text)),
      sent.join('\n'),
    ).toHaveLength(1);
    expect(sent.filter((text) => text.includes('__version_artists')).length, sent.join('\n')).toBeGreaterThanOrEqual(1);
  });
});
