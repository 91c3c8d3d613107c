// valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/lq.out \
//   node --single-threaded bench/list-query-instructions.mjs <dataset.db> <treeA> <treeB>...
// The instructions of the query layer alone (no HTTP, no SQL) for the mix's users-list reads (seed 14, the
// first 6,000 reads of the mix): listQuery (parse, check, plan) and linkHeader, per built tree (dist/src),
// in one process. Checks the Link headers equal across the trees, warms up, then runs each tree in ABBA
// order with instrumentation on only then, each phase dumped under the tree's directory name (grep totals
// /tmp/lq.out.*): no timers or I/O run inside the window (a whole service under callgrind counted its
// timers' work too, varying with the window's length), so the count is steady to a few thousandths. Needs callgrind_control on the PATH.
import { execFileSync } from 'node:child_process';
const W = new URL('.', import.meta.url).pathname;
const { mixDataset, buildMix } = await import(`${W}lib/mix-run.mjs`);
const [file, ...trees] = process.argv.slice(2);
const mix = buildMix({ mixSeed: 14, mixRequests: 6000, mixProbes: 0 }, mixDataset(file, { writeAlbumId: -1 }));
const urls = mix.reads.filter((r) => r.kind === 'users-list').map((r) => r.path);
const T = [];
for (const tree of trees) {
  const { listQuery, linkHeader, pathOf } = await import(`${tree}/dist/src/query/index.js`);
  const { usersCollection } = await import(`${tree}/dist/src/modules/users/users.collection.js`);
  const run = () => urls.map((u) => linkHeader(pathOf(u), listQuery(usersCollection, u), { total: 100_000 }));
  T.push({ name: tree.split('/').pop(), run });
}
const first = JSON.stringify(T[0].run());
for (const t of T) if (JSON.stringify(t.run()) !== first) throw new Error(`${t.name}: Link headers differ`);
for (const t of T) for (let i = 0; i < 5; i++) t.run();
console.log(`${urls.length} users-list reads, the same Link headers on every tree`);
const cc = (...a) => execFileSync('callgrind_control', [...a, String(process.pid)]);
for (const t of [...T, ...[...T].reverse()]) {
  cc('-i', 'on');
  t.run();
  cc('-i', 'off');
  cc('-d', t.name);
}
