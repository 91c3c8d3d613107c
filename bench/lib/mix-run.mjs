// The realistic scenario in the harness: the dataset sample the generator draws from, the four load
// phases (wrk request lists that never repeat a read until the whole list is used), the one-at-a-time
// latency per request kind, the ceiling's answers, and putting PATCHed users back after each PATCH phase.
import http from 'node:http';
import { appendFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MIX_KINDS, generateMix } from './mix.mjs';

export { MIX_PHASES, MIX_LATENCY, MIX_IDS } from './mix.mjs';

const WRITE_EVERY = 20;

/**
 * From the pristine dataset file (PostgreSQL is seeded by the same command and seed, so it holds the
 * same rows and ids): user and artist counts, and `sample` artists spread over the catalogue with
 * their names and albums (never the album the benchmark writes to).
 */
export function mixDataset(file, { sample = 300, writeAlbumId }) {
  const db = new Database(file, { readonly: true });
  try {
    const users = db.prepare('SELECT max(id) AS n FROM users').get().n ?? 0;
    const artists = db.prepare('SELECT max(id) AS n FROM artists').get().n ?? 0;
    const step = Math.max(1, Math.floor(artists / sample));
    const rows = db
      .prepare(
        'SELECT ar.id, ar.name, al.id AS album FROM artists ar JOIN albums al ON al.artist_id = ar.id WHERE (ar.id - 1) % ? = 0 AND al.id <> ? ORDER BY ar.id, al.id',
      )
      .all(step, writeAlbumId);
    const byId = new Map();
    for (const row of rows) {
      if (!byId.has(row.id)) byId.set(row.id, { id: row.id, name: row.name, albums: [] });
      byId.get(row.id).albums.push(row.album);
    }
    return { users, artists, catalogue: [...byId.values()] };
  } finally {
    db.close();
  }
}

/** The stored status and age of the users the PATCH phase changes: what is put back after it. */
export function originalsOf(file, ids) {
  const db = new Database(file, { readonly: true });
  try {
    const get = db.prepare('SELECT status, age FROM users WHERE id = ?');
    return new Map(ids.map((id) => [id, get.get(id)]));
  } finally {
    db.close();
  }
}

export function buildMix(o, dataset) {
  return generateMix({ seed: o.mixSeed, count: o.mixRequests, probesPerKind: o.mixProbes, ...dataset });
}

const scopeOf = Object.fromEntries(MIX_KINDS.map((k) => [k.kind, k.scope]));

/** One side's requests: reads with that side's tokens; writes to its write album or users. */
export function mixRequests(mix, tokens, ids) {
  const auth = (scope) => ({ Authorization: `Bearer ${tokens[scope]}` });
  const json = (scope) => ({ ...auth(scope), 'Content-Type': 'application/json' });
  return {
    reads: mix.reads.map((r) => ({ method: 'GET', path: r.path, headers: auth(scopeOf[r.kind]) })),
    song: [
      {
        method: 'POST',
        path: `/artists/${ids.writeArtistId}/albums/${ids.writeAlbumId}/songs`,
        headers: json('write'),
        body: JSON.stringify({ name: 'Benchmark song', time: '03:25' }),
      },
    ],
    patch: mix.patches.map((p) => ({ method: 'PATCH', path: `/users/${p.id}`, headers: json('admin'), body: JSON.stringify(p.body), userId: p.id })),
    restore: (id, original) => ({ method: 'PATCH', path: `/users/${id}`, headers: json('admin'), body: JSON.stringify(original) }),
  };
}

/**
 * Where each side is in the read list and in each write list: every run continues where the last one
 * on that side stopped, so no read is sent twice (and answered from the response cache) before the
 * whole list has been used.
 */
export function newCursor() {
  return { read: 0, song: 0, patch: 0, patchDirtyFrom: null };
}

/** A phase's request list from the cursor on: the reads, with one write in every 20 requests. */
export function phaseList(reqs, phase, cursor) {
  const out = [];
  const n = reqs.reads.length;
  const writes = phase.write ? reqs[phase.write] : null;
  let w = 0;
  for (let i = 0; i < n; i++) {
    out.push(reqs.reads[(cursor.read + i) % n]);
    if (writes && i % (WRITE_EVERY - 1) === WRITE_EVERY - 2) out.push(writes[(cursor[phase.write] + w++) % writes.length]);
  }
  return out;
}

/** Moves the cursor past what a run sent: the answered requests plus at most one in flight per connection. */
export function advance(cursor, phase, sent) {
  const writes = phase.write ? Math.ceil(sent / WRITE_EVERY) : 0;
  if (phase.write === 'patch' && cursor.patchDirtyFrom === null) cursor.patchDirtyFrom = cursor.patch;
  cursor.read += sent - writes;
  if (phase.write) cursor[phase.write] += writes;
}

/** The users PATCHed since the last restore (all of them once the list has wrapped). */
export function dirtyUsers(cursor, reqs) {
  if (cursor.patchDirtyFrom === null) return [];
  const n = reqs.patch.length;
  const count = Math.min(n, cursor.patch - cursor.patchDirtyFrom);
  const ids = new Set();
  for (let i = 0; i < count; i++) ids.add(reqs.patch[(cursor.patchDirtyFrom + i) % n].userId);
  return [...ids];
}

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

/** One request on the given agent: { status, headers (raw pairs, hop-by-hop left out), body, ms }. */
function timed(agent, base, { method, path, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(base + path, { method, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const raw = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (!HOP.has(res.rawHeaders[i].toLowerCase())) raw.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
        }
        resolve({ status: res.statusCode, headers: raw, body: Buffer.concat(chunks), ms });
      });
    });
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error(`timeout: ${method} ${path}`)));
    req.end(body);
  });
}

const keepAlive = () => new http.Agent({ keepAlive: true, maxSockets: 1 });
const is2xx = (s) => s >= 200 && s <= 299;
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

/** Sends requests one after another over one connection; fails loudly on any non-2xx. */
export async function sequential(base, requests) {
  const agent = keepAlive();
  try {
    const out = [];
    for (const r of requests) {
      const res = await timed(agent, base, r);
      if (!is2xx(res.status)) throw new Error(`${r.method} ${r.path} answered ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
      out.push(res);
    }
    return out;
  } finally {
    agent.destroy();
  }
}

const WARMING_READS = 400;
const WARMING_CONNECTIONS = 4;

/**
 * Reads of the mix's kinds drawn with another seed, none of them a request of the mix itself (which
 * they would leave in the response cache): what the service answers before the one-at-a-time
 * latency, so that its slowest request is a request's own cost, not the worker's first (its code
 * not yet compiled by V8, its first statements prepared, its first summary read): the probes came
 * straight after start, and the slowest of each kind was its first.
 */
function warmingReads(o, dataset, mix) {
  const taken = new Set([...mix.reads.map((r) => r.path), ...Object.values(mix.probes).flat()]);
  const other = generateMix({ ...dataset, seed: o.mixSeed + 1, count: WARMING_READS, probesPerKind: 0, patches: 0 });
  return other.reads.filter((r) => !taken.has(r.path));
}

/** Sends the warming reads over a few connections at once (with every worker, each its share of them). */
async function warmUp(base, reads, tokens) {
  const auth = (kind) => ({ Authorization: `Bearer ${tokens[scopeOf[kind]]}` });
  const requests = reads.map((r) => ({ method: 'GET', path: r.path, headers: auth(r.kind) }));
  const lanes = Array.from({ length: WARMING_CONNECTIONS }, (_, lane) => requests.filter((_, i) => i % WARMING_CONNECTIONS === lane));
  await Promise.all(lanes.map((lane) => sequential(base, lane)));
}

/**
 * Latency of one request at a time, uncached: each probe path (distinct from every other request of
 * the run) sent once, in turn across the kinds, over one keep-alive connection. Every answer must be
 * 2xx. Returns { stats: { kind: { n, p50, p99, max, slowest } }, answers: { kind: [response] } }.
 */
export async function probeLatency(base, mix, tokens) {
  const auth = (kind) => ({ Authorization: `Bearer ${tokens[scopeOf[kind]]}` });
  const order = [];
  const longest = Math.max(...Object.values(mix.probes).map((p) => p.length));
  for (let i = 0; i < longest; i++) {
    for (const { kind } of MIX_KINDS) if (i < mix.probes[kind].length) order.push({ kind, path: mix.probes[kind][i] });
  }
  const agent = keepAlive();
  const times = {};
  const answers = {};
  try {
    for (const { kind, path } of order) {
      const res = await timed(agent, base, { method: 'GET', path, headers: auth(kind) });
      if (!is2xx(res.status)) throw new Error(`mix: GET ${path} answered ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
      (times[kind] ??= []).push({ ms: res.ms, path });
      (answers[kind] ??= []).push(res);
    }
  } finally {
    agent.destroy();
  }
  const stats = {};
  for (const [kind, list] of Object.entries(times)) {
    const sorted = list.map((t) => t.ms).sort((a, b) => a - b);
    const slowest = list.reduce((a, b) => (b.ms > a.ms ? b : a));
    stats[kind] = { n: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1), slowest: slowest.path };
  }
  return { stats, answers, times };
}

const asCaptured = (res) => ({ status: res.status, headers: res.headers, body: res.body.toString('base64') });

/**
 * The mix ceiling's answers: the probes' real answers, in the proportions of the mix's kinds (cycled
 * by the ceiling whatever the URL), and one real answer each for the song POST and the user PATCH.
 */
export function ceilingAnswers(mix, answers, post, patch) {
  const next = Object.fromEntries(MIX_KINDS.map((k) => [k.kind, 0]));
  const GET = mix.reads.slice(0, 600).map(({ kind }) => asCaptured(answers[kind][next[kind]++ % answers[kind].length]));
  return { GET, POST: asCaptured(post), PATCH: asCaptured(patch) };
}

/**
 * Everything the mix needs before its first measurement, on every backend side: the requests
 * (generated from the pristine file), the one-at-a-time latency (which is also the check that the
 * generated reads answer 2xx) and the ceiling's answers. sides: [{ side, proc, tokens, ids }], SQLite first.
 */
export async function prepareMix({ o, pristine, sides, waitIdle, log }) {
  const started = Date.now();
  const dataset = mixDataset(pristine, { writeAlbumId: sides[0].ids.writeAlbumId });
  const mix = buildMix(o, dataset);
  const counts = {};
  for (const r of mix.reads) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
  log(
    `mix: ${mix.reads.length} distinct reads (${Object.entries(counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}), ${mix.patches.length} users to PATCH, seed ${o.mixSeed}, in ${Date.now() - started} ms`,
  );
  const originals = originalsOf(
    pristine,
    mix.patches.map((p) => p.id),
  );
  const warming = warmingReads(o, dataset, mix);
  const latency = {};
  const requests = {};
  let sqliteAnswers = null;
  for (const { side, proc, tokens, ids } of sides) {
    requests[side] = mixRequests(mix, tokens, ids);
    await waitIdle(proc.pid);
    await warmUp(proc.base, warming, tokens);
    log(`mix: one request at a time on ${side}, ${Object.values(mix.probes).reduce((n, p) => n + p.length, 0)} distinct URLs`);
    const probe = await probeLatency(proc.base, mix, tokens);
    latency[side] = probe.stats;
    // MIX_LATENCY_LOG=<file>: every probe's time and URL, one JSON line each, to find a kind's slow requests.
    if (process.env.MIX_LATENCY_LOG) {
      const lines = Object.entries(probe.times).flatMap(([kind, list]) => list.map((t) => JSON.stringify({ side, kind, ms: t.ms, path: t.path })));
      appendFileSync(process.env.MIX_LATENCY_LOG, lines.join('\n') + '\n');
    }
    for (const [kind, s] of Object.entries(probe.stats)) {
      log(`mix latency ${side.padEnd(8)} ${kind.padEnd(12)} p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  max ${s.max.toFixed(2)} ms`);
    }
    sqliteAnswers ??= probe.answers;
  }
  // One real answer for each write, for the ceiling; the PATCHed user is put back at once.
  const svc = sides[0];
  const reqs = requests[svc.side];
  const [post, patch] = await sequential(svc.proc.base, [reqs.song[0], reqs.patch[0]]);
  await sequential(svc.proc.base, [reqs.restore(mix.patches[0].id, originals.get(mix.patches[0].id))]);
  const counted = Object.fromEntries(MIX_KINDS.map((k) => [k.kind, counts[k.kind] ?? 0]));
  return {
    mix,
    originals,
    requests,
    latency,
    ceiling: ceilingAnswers(mix, sqliteAnswers, post, patch),
    summary: {
      seed: o.mixSeed,
      reads: mix.reads.length,
      kinds: counted,
      probesPerKind: o.mixProbes,
      patchedUsers: mix.patches.length,
      examples: mix.reads.slice(0, 6).map((r) => r.path),
    },
  };
}

/** After a PATCH phase on a side: every user it may have changed gets its stored status and age back. */
export async function restorePatched(base, cursor, reqs, originals) {
  const ids = dirtyUsers(cursor, reqs);
  cursor.patchDirtyFrom = null;
  if (ids.length)
    await sequential(
      base,
      ids.map((id) => reqs.restore(id, originals.get(id))),
    );
  return ids.length;
}
