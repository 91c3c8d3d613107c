// How many of a stream of user PATCHes sent through the service are HOT updates on PostgreSQL, and
// what they cost the machine (issue 32): distinct users drawn at random from the whole table, each
// PATCHed once with a status and/or an age as the bench's PATCH phases send them (bench/lib/mix.mjs
// generateMix), `concurrency` at a time (the service batches concurrent ones into one UPDATE). On a copy
// of a dataset (never the shared one: it writes).
//
//   node bench/patch-hot.mjs <postgres url> [patches] [concurrency]
//
// Prints the users index's load time at start (its 'users index ready' log line), the HOT share
// (pg_stat_user_tables, polled until every update is reported), and the CPU per PATCH of the
// service's process and of the database's backends serving it (/proc, clock ticks of 10 ms).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { freePort, waitIdle } from './lib/procs.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');
const [url, n = '2000', c = '8'] = process.argv.slice(2);
const patches = Number(n);
const concurrency = Number(c);
if (!url?.startsWith('postgres') || !(patches > 0) || !(concurrency > 0)) {
  console.error('usage: node bench/patch-hot.mjs <postgres url> [patches] [concurrency]');
  process.exit(2);
}
const CLI = fileURLToPath(new URL('../dist/music-catalogue.mjs', import.meta.url));
const TOKEN = 'bench-admin-token-not-a-secret-0001';

/** A fixed sequence of numbers in [0, 1) (mulberry32). */
function rng(seed) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const ticks = (pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000;
  } catch {
    return 0;
  }
};

const db = new pg.Client({ connectionString: url });
await db.connect();
const q = async (text, values) => (await db.query(text, values)).rows;
const [{ m: maxId }] = await q('select max(id) as m from users');
const counts = async () =>
  (await q("select n_tup_upd::bigint as upd, n_tup_hot_upd::bigint as hot from pg_stat_user_tables where relid = 'users'::regclass")).map((r) => ({
    upd: Number(r.upd),
    hot: Number(r.hot),
  }))[0];

const port = await freePort();
const child = spawn(process.execPath, [CLI, 'serve'], {
  env: {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    DATABASE_URL: url,
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '0',
    CATALOGUE_ADMIN_TOKEN: TOKEN,
    HOST: '127.0.0.1',
    PORT: String(port),
    WORKERS: '1',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let log = '';
child.stdout.on('data', (d) => (log += d));
child.stderr.on('data', (d) => (log += d));
const ready = /"ms":(\d+)[^\n]*users index ready/;
for (const deadline = Date.now() + 600_000; !ready.test(log);) {
  if (child.exitCode !== null) throw new Error(`the service exited:\n${log.slice(-4000)}`);
  if (Date.now() > deadline) throw new Error('the users index was not ready in 10 minutes');
  await new Promise((r) => setTimeout(r, 100));
}
const indexLoadMs = Number(ready.exec(log)[1]);
const base = `http://127.0.0.1:${port}`;

const random = rng(7);
const ids = new Set();
while (ids.size < Math.min(patches, maxId)) ids.add(1 + Math.floor(random() * maxId));
const work = [...ids].map((id) => {
  const x = Math.floor(random() * 3);
  const status = random() < 0.5 ? 'active' : 'inactive';
  const age = Math.floor(random() * 100);
  return { id, body: x === 0 ? { status } : x === 1 ? { age } : { status, age } };
});
const patch = async ({ id, body }) => {
  const res = await fetch(`${base}/users/${id}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`PATCH /users/${id} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
};
// Warm the connections and statements on users left out of the count.
for (let i = 0; i < 20; i++) await patch({ id: 1 + i, body: { age: 30 + i } });

// The database's backends serving the service: each one's CPU counted from the start (0 for one
// opened during the run), for those still there at the end.
const backends = async () => (await q('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')).map((r) => r.pid);
const cpu = async () => ({ service: ticks(child.pid), db: new Map((await backends()).map((pid) => [pid, ticks(pid)])) });
const dbCpuUs = (from, to) => [...to.db].reduce((s, [pid, t]) => s + t - (from.db.get(pid) ?? 0), 0);
// The load's own work done (the users index's last steps, the collector) before the count starts.
await waitIdle(child.pid, 60_000, 0);
// Every update so far reported before the count starts.
let before = await counts();
for (let last = -1; before.upd !== last;) {
  last = before.upd;
  await q('select pg_sleep(1.5)');
  before = await counts();
}
const cpu0 = await cpu();
const t0 = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < work.length) await patch(work[next++]);
  }),
);
const seconds = (performance.now() - t0) / 1000;
const cpu1 = await cpu();
let after = await counts();
for (const deadline = Date.now() + 60_000; after.upd - before.upd < work.length && Date.now() < deadline;) {
  await q('select pg_sleep(0.5)');
  after = await counts();
}
const [{ reloptions, bytes }] = await q(
  "select coalesce(array_to_string(reloptions, ','), '') as reloptions, pg_relation_size('users')::bigint as bytes from pg_class where oid = 'users'::regclass",
);
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await db.end();
console.log(
  JSON.stringify({
    patches: work.length,
    concurrency,
    reloptions,
    usersBytes: Number(bytes),
    indexLoadMs,
    patchesPerSecond: Math.round(work.length / seconds),
    serviceCpuUsPerPatch: Math.round((cpu1.service - cpu0.service) / work.length),
    dbCpuUsPerPatch: Math.round(dbCpuUs(cpu0, cpu1) / work.length),
    hot: `${after.hot - before.hot} of ${after.upd - before.upd}`,
  }),
);
