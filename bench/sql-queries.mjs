// node bench/sql-queries.mjs <built tree> [dataset.db]: the users lists' SQL path alone (what
// USERS_INDEX=off, the warm-up and queries outside the index's family read), in one process, no HTTP:
// opens the dataset read-only with <built tree>'s list engine (dist/src), answers the bench's
// one-at-a-time probes of the users kinds (lib/mix.mjs: users list, alias, name prefix, age range,
// cursor page; the bench's seed, 200 a kind) after warming up on other reads of those kinds, and
// prints p50 / p99 / max ms per kind. TOP=n: the n slowest requests with their times. Under flock
// /tmp/bench.lock. Base and new compare on datasets each tree migrated (a tree refuses the other's
// indexes). An alias is its list with the alias's filters written out (the same plan).
import { performance } from 'node:perf_hooks';
import { URLSearchParams } from 'node:url';
import Database from 'better-sqlite3';
import { mixDataset, buildMix } from './lib/mix-run.mjs';
import { DEFAULT_MIX_SEED, DEFAULT_MIX_COUNT } from './lib/mix.mjs';

const tree = process.argv[2];
const file = process.argv[3] ?? new URL('./results/dataset-u1000000-a10000x10x10-s42.db', import.meta.url).pathname;
const mod = (p) => import(`${tree}/dist/src/${p}`);
const { Kysely, SqliteDialect } = await import(`${tree}/node_modules/kysely/dist/esm/index.js`);
const { registerSqliteHandle } = await mod('db/precompiled.js');
const { listUsers } = await mod('modules/users/users.repository.js');
const { listQuery } = await mod('query/index.js');
const { usersCollection } = await mod('modules/users/users.collection.js');

const handle = new Database(file, { readonly: true });
const db = new Kysely({ dialect: new SqliteDialect({ database: handle }) });
registerSqliteHandle(db, handle);
const alias = new URLSearchParams(handle.prepare("SELECT query FROM aliases WHERE name = 'young-brazilians'").get().query);

const KINDS = ['users-list', 'alias', 'users-prefix', 'users-range', 'users-cursor'];
const dataset = mixDataset(file, { writeAlbumId: -1 });
const mix = buildMix({ mixSeed: DEFAULT_MIX_SEED, mixRequests: DEFAULT_MIX_COUNT, mixProbes: Number(process.env.PROBES ?? 200) }, dataset);
const warming = buildMix({ mixSeed: DEFAULT_MIX_SEED + 1, mixRequests: 10_000, mixProbes: 0 }, dataset).reads.filter((r) => KINDS.includes(r.kind));

function planOf(path) {
  if (!path.startsWith('/users/')) return listQuery(usersCollection, path);
  const q = new URLSearchParams(path.split('?')[1] ?? '');
  for (const [k, v] of alias) q.append(k, v);
  return listQuery(usersCollection, `/users?${q}`);
}

for (const r of warming.slice(0, 400)) await listUsers(db, planOf(r.path));
const times = [];
const longest = Math.max(...KINDS.map((k) => mix.probes[k].length));
for (let i = 0; i < longest; i++)
  for (const kind of KINDS) {
    const path = mix.probes[kind][i];
    if (path === undefined) continue;
    const plan = planOf(path);
    const t = performance.now();
    await listUsers(db, plan);
    times.push({ kind, path, ms: performance.now() - t });
  }
const q = (s, p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
for (const kind of KINDS) {
  const s = times
    .filter((t) => t.kind === kind)
    .map((t) => t.ms)
    .sort((a, b) => a - b);
  console.log(`${kind.padEnd(13)} n ${s.length}  p50 ${q(s, 0.5).toFixed(2)} ms  p99 ${q(s, 0.99).toFixed(2)} ms  max ${s.at(-1).toFixed(2)} ms`);
}
for (const t of [...times].sort((a, b) => b.ms - a.ms).slice(0, Number(process.env.TOP ?? 0)))
  console.log(`${t.ms.toFixed(2).padStart(8)} ms  ${t.kind} ${t.path}`);
await db.destroy();
