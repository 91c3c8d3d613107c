// valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/ix.out \
//   node --single-threaded --expose-gc bench/index-instructions.mjs <every> <treeA> <treeB>...
// The instructions of the users index's answers (no HTTP, no SQL) to the bench mix's users-list, alias and
// single-user reads (every `every`-th, with the plan: listQuery, indexSortOf), per built tree (dist/src), in
// one process: the first tree loads its own index, the others share the last tree's. Checks every answer
// equal across the trees (JSON), warms up, then runs each tree in ABBA order with instrumentation on only
// then, each phase dumped under the tree's directory name (grep totals /tmp/ix.out.*): a ratio of load-free
// counts on a shared, noisy machine (wall-clock there is noise). Needs callgrind_control on the PATH.
import { execFileSync } from 'node:child_process';
import { URLSearchParams } from 'node:url';
import Database from 'better-sqlite3';
const W = new URL('.', import.meta.url).pathname;
const { mixDataset, buildMix } = await import(`${W}lib/mix-run.mjs`);
const { DEFAULT_MIX_SEED, DEFAULT_MIX_COUNT } = await import(`${W}lib/mix.mjs`);
const file = `${W}results/dataset-u1000000-a10000x10x10-s42.db`;
const every = Number(process.argv[2]);
const trees = process.argv.slice(3);
async function load(tree) {
  const { UsersIndex } = await import(`${tree}/dist/src/modules/users/index/users-index.js`);
  const { USERS } = await import(`${tree}/dist/src/modules/users/users.table.js`);
  const COLUMNS = [...USERS.fields, ...USERS.names.map((name) => `${name}_key`), 'country_fold', 'version'];
  const db = new Database(file, { readonly: true });
  const index = new UsersIndex();
  const range = db.prepare('SELECT count(*) AS n, min(id) AS min, max(id) AS max FROM users').get();
  index.reserve(range.n + 1000, 0, { min: range.min, max: range.max });
  const page = db.prepare(`SELECT ${COLUMNS.join(', ')} FROM users WHERE id > ? ORDER BY id LIMIT 5000`);
  for (let after = -1; ;) {
    const rows = page.all(after);
    if (rows.length === 0) break;
    index.add(rows);
    after = rows[rows.length - 1].id;
  }
  index.finishLoad();
  const alias = new URLSearchParams(db.prepare("SELECT query FROM aliases WHERE name = 'young-brazilians'").get().query);
  db.close();
  return { index, alias };
}
const first = await load(trees[0]);
const shared = await load(trees[trees.length - 1]);
const T = [];
for (const [i, tree] of trees.entries()) {
  const mod = (p) => import(`${tree}/dist/src/${p}`);
  const { answerFromIndex } = await mod('modules/users/index/query.js');
  const { USERS_INDEX_ANSWERS, indexSortOf } = await mod('modules/users/index/answers.js');
  const { listQuery } = await mod('query/index.js');
  const { usersCollection } = await mod('modules/users/users.collection.js');
  const index = i === 0 ? first.index : shared.index;
  T.push({
    name: tree.split('/').pop(),
    run: (q) => {
      if (q.id !== undefined) return index.user(q.id);
      const plan = listQuery(usersCollection, q.url);
      const sort = indexSortOf(USERS_INDEX_ANSWERS, plan);
      return sort ? answerFromIndex(index, USERS_INDEX_ANSWERS, sort, plan) : undefined;
    },
  });
}
const dataset = mixDataset(file, { writeAlbumId: -1 });
const mix = buildMix({ mixSeed: DEFAULT_MIX_SEED, mixRequests: DEFAULT_MIX_COUNT, mixProbes: 0 }, dataset);
const qs = [];
let k = 0;
for (const r of mix.reads) {
  if (r.kind !== 'user' && r.kind !== 'users-list' && r.kind !== 'alias') continue;
  if (k++ % every !== 0) continue;
  if (r.kind === 'user') {
    qs.push({ id: Number(r.path.split('/')[2].split('?')[0]) });
    continue;
  }
  let url = r.path;
  if (r.kind === 'alias') {
    const q = new URLSearchParams(url.split('?')[1] ?? '');
    for (const [k, v] of first.alias) q.append(k, v);
    url = `/users?${q}`;
  }
  qs.push({ url });
}
let bad = 0;
for (const q of qs) {
  const a = JSON.stringify(T[0].run(q));
  for (const t of T.slice(1)) if (JSON.stringify(t.run(q)) !== a) bad++;
}
for (const t of T) for (const q of qs) t.run(q);
console.log(`${qs.length} queries, ${bad} mismatches`);
const cc = (...a) => execFileSync('callgrind_control', [...a, String(process.pid)]);
for (const t of [...T, ...[...T].reverse()]) {
  globalThis.gc?.();
  cc('-i', 'on');
  for (const q of qs) t.run(q);
  cc('-i', 'off');
  cc('-d', t.name);
}
