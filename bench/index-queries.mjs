// node bench/index-queries.mjs <built tree> [rounds] [dataset.db]: the CPU per query of the users index
// alone (no HTTP, no SQL), in one process: loads <built tree>'s UsersIndex (dist/src) from the dataset
// (default: this tree's 1M-user bench dataset), then answers the bench mix's own users-list and alias
// reads (lib/mix.mjs, the bench's seed and count) `rounds` times (default 3), and prints the mean
// microseconds per query by kind and first sort field, with each group's share of the index's time.
// An alias is its list with the alias's filters written out (the same plan). Under flock /tmp/bench.lock.
// CHECK=1: prints a digest of every answer (ids and totals), to compare two trees' answers.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { URLSearchParams } from 'node:url';
import Database from 'better-sqlite3';
import { mixDataset, buildMix } from './lib/mix-run.mjs';
import { DEFAULT_MIX_SEED, DEFAULT_MIX_COUNT } from './lib/mix.mjs';

const tree = process.argv[2];
const rounds = Number(process.argv[3] ?? 3);
const file = process.argv[4] ?? new URL('./results/dataset-u1000000-a10000x10x10-s42.db', import.meta.url).pathname;
const mod = (p) => import(`${tree}/dist/src/${p}`);
const { UsersIndex } = await mod('modules/users/index/users-index.js');
const { answerFromIndex } = await mod('modules/users/index/query.js');
const { USERS_INDEX_ANSWERS, indexSortOf } = await mod('modules/users/index/answers.js');
const { listQuery } = await mod('query/index.js');
const { usersCollection } = await mod('modules/users/users.collection.js');
const { USERS } = await mod('modules/users/users.table.js');

const COLUMNS = [...USERS.fields, ...USERS.names.map((name) => `${name}_key`), 'country_fold'];
const db = new Database(file, { readonly: true });
const t0 = performance.now();
const index = new UsersIndex();
const range = db.prepare('SELECT count(*) AS n, min(id) AS min, max(id) AS max FROM users').get();
index.reserve(range.n + 1000, 0, { min: range.min, max: range.max });
const page = db.prepare(`SELECT ${COLUMNS.join(', ')} FROM users WHERE id > ? ORDER BY id LIMIT 5000`);
for (let after = -Infinity; ;) {
  const rows = page.all(after === -Infinity ? -1 : after);
  if (rows.length === 0) break;
  index.add(rows);
  after = rows[rows.length - 1].id;
}
index.finishLoad();
const alias = new URLSearchParams(db.prepare("SELECT query FROM aliases WHERE name = 'young-brazilians'").get().query);
db.close();
console.log(`loaded ${index.size} users in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const dataset = mixDataset(file, { writeAlbumId: -1 });
const mix = buildMix({ mixSeed: DEFAULT_MIX_SEED, mixRequests: DEFAULT_MIX_COUNT, mixProbes: 0 }, dataset);
const queries = [];
for (const r of mix.reads) {
  if (r.kind !== 'users-list' && r.kind !== 'alias') continue;
  let url = r.path;
  if (r.kind === 'alias') {
    const q = new URLSearchParams(url.split('?')[1] ?? '');
    for (const [k, v] of alias) q.append(k, v);
    url = `/users?${q}`;
  }
  const plan = listQuery(usersCollection, url);
  const sort = indexSortOf(USERS_INDEX_ANSWERS, plan);
  if (!sort) continue;
  const first = sort[0] ? `${sort[0].field}${sort[0].desc ? ' desc' : ''}` : 'id';
  const group = `${r.kind} by ${first.split(' ')[0]}${sort.length > 1 ? ' +2nd' : ''}`;
  queries.push({ group, plan, sort, path: r.path, kind: r.kind });
}
console.log(`${queries.length} queries (users lists and aliases the index answers)`);

const us = new Float64Array(queries.length);
const digest = createHash('sha256');
for (let round = 0; round < rounds; round++)
  for (let i = 0; i < queries.length; i++) {
    const q = queries[i];
    const a = process.hrtime.bigint();
    const res = answerFromIndex(index, USERS_INDEX_ANSWERS, q.sort, q.plan);
    us[i] += Number(process.hrtime.bigint() - a) / 1000;
    if (round === 0 && process.env.CHECK) digest.update(`${q.path} ${res.total} ${res.rows.map((r) => r.id).join(',')}\n`);
  }
const groups = new Map();
let all = 0;
for (let i = 0; i < queries.length; i++) {
  const g = groups.get(queries[i].group) ?? { n: 0, us: 0, max: 0 };
  g.n++;
  g.us += us[i] / rounds;
  g.max = Math.max(g.max, us[i] / rounds);
  groups.set(queries[i].group, g);
  all += us[i] / rounds;
}
const kinds = {};
for (const q of queries) kinds[q.kind] = (kinds[q.kind] ?? 0) + 1;
for (const [k, n] of Object.entries(kinds)) {
  const sum = queries.reduce((s, q, i) => s + (q.kind === k ? us[i] / rounds : 0), 0);
  console.log(`${k}: ${n} queries, mean ${(sum / n).toFixed(1)} us`);
}
console.log(`all: mean ${(all / queries.length).toFixed(1)} us\n`);
console.log('group                                n   mean us    max us  share');
for (const [name, g] of [...groups].sort((a, b) => b[1].us - a[1].us))
  console.log(
    `${name.padEnd(34)} ${String(g.n).padStart(5)} ${(g.us / g.n).toFixed(1).padStart(9)} ${g.max.toFixed(0).padStart(9)} ${((100 * g.us) / all).toFixed(1).padStart(5)}%`,
  );
if (process.env.CHECK) console.log(`answers digest ${digest.digest('hex')}`);
if (process.env.TOP) {
  const order = [...us.keys()].sort((a, b) => us[b] - us[a]).slice(0, Number(process.env.TOP));
  for (const i of order) console.log(`${(us[i] / rounds).toFixed(0).padStart(7)} us  ${queries[i].kind} ${queries[i].path}`);
}
