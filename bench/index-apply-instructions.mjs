// valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/ixa.out \
//   node --single-threaded --expose-gc bench/index-apply-instructions.mjs /tmp/ixa.out <users> <rewrites> <treeA> <treeB>...
// The instructions of the users index's apply() of a user rewritten in place (a PATCH of its status and
// age: the change feed carries the whole row, names and email as they were), per built tree (dist/src), in
// one process. Each tree loads the dataset's first <users> users into an index of its own, then applies
// <rewrites> rows one apply() each (the catch-up of a PATCH), each row read from the dataset again (fresh
// strings, as the feed's are) with another status and age; warmed up on other users first. The trees run
// in ABBA order (A and B each one half of the rewrites, the same halves), instrumentation on only around
// the applies, each phase dumped; checks every tree's rewritten users and each order's first and last
// slots' rows equal (JSON). Prints instructions per apply per phase, total and outside
// Permutation.relocate's shifts (its copyWithin, the C++ builtin: inclusive, read by callgrind_annotate
// from the dump; relocate's few comparisons around them, JIT code without symbols, stay in "outside").
// Needs callgrind_control and callgrind_annotate on the PATH; the dataset bench/results/dataset-u1000000-a10000x10x10-s42.db.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import Database from 'better-sqlite3';
const W = new URL('.', import.meta.url).pathname;
const file = `${W}results/dataset-u1000000-a10000x10x10-s42.db`;
const [out, usersArg, rewritesArg, ...trees] = process.argv.slice(2);
const users = Number(usersArg);
const rewrites = Number(rewritesArg);
const WARM = Number(process.env.WARM ?? 3000);

const db = new Database(file, { readonly: true });
const { USERS } = await import(`${trees[0]}/dist/src/modules/users/users.table.js`);
const COLUMNS = [...USERS.fields, ...USERS.names.map((name) => `${name}_key`), 'country_fold', 'version'];
const byId = db.prepare(`SELECT ${COLUMNS.join(', ')} FROM users WHERE id = ?`);

async function load(tree) {
  const { UsersIndex } = await import(`${tree}/dist/src/modules/users/index/users-index.js`);
  const index = new UsersIndex();
  const range = db.prepare('SELECT count(*) AS n, min(id) AS min, max(id) AS max FROM (SELECT id FROM users WHERE id <= ?)').get(users);
  index.reserve(range.n + 1000, 0, { min: range.min, max: range.max });
  const page = db.prepare(`SELECT ${COLUMNS.join(', ')} FROM users WHERE id > ? AND id <= ? ORDER BY id LIMIT 5000`);
  for (let after = -1; ;) {
    const rows = page.all(after, users);
    if (rows.length === 0) break;
    index.add(rows);
    after = rows[rows.length - 1].id;
  }
  index.finishLoad();
  return index;
}

// The rewritten ids (a fixed LCG: the same for every tree), the warm-up's first.
const ids = [];
for (let x = 42; ids.length < WARM + rewrites;) {
  x = (x * 1103515245 + 12345) % 2 ** 31;
  ids.push(1 + (x % users));
}
const statuses = ['active', 'inactive'];
/** The k-th rewrite's row: as the table holds it, read again, with its status and age changed. */
function rewrite(k) {
  const row = byId.get(ids[k]);
  row.status = statuses[(statuses.indexOf(row.status) + 1 + (k % 2)) % statuses.length];
  row.age = 18 + ((row.age + 7 + k) % 70);
  row.version += 1;
  return row;
}
const T = [];
for (const tree of trees) T.push({ name: basename(tree), index: await load(tree) });
// The rows of every apply, read before any measured phase (the reads are not measured), one Map each;
// read per tree (no tree sees strings another hashed or compared).
const perTree = T.map(() =>
  Array.from({ length: WARM + rewrites }, (_, k) => {
    const row = rewrite(k);
    return new Map([[row.id, row]]);
  }),
);
for (const [i, t] of T.entries()) for (let k = 0; k < WARM; k++) t.index.apply(perTree[i][k]);
const half = WARM + Math.floor(rewrites / 2);
const cc = (...a) => execFileSync('callgrind_control', [...a, String(process.pid)], { stdio: 'ignore' });
const phases = [];
const order = [...T.keys(), ...[...T.keys()].reverse()];
for (const [p, i] of order.entries()) {
  const [from, to] = p < T.length ? [WARM, half] : [half, WARM + rewrites];
  const index = T[i].index;
  const batch = perTree[i].slice(from, to);
  globalThis.gc?.();
  cc('-i', 'on');
  for (const m of batch) index.apply(m);
  cc('-i', 'off');
  cc('-d', `${T[i].name}-${p}`);
  phases.push({ tree: T[i].name, applies: batch.length });
}
db.close();
let bad = 0;
const rowsOf = (index) =>
  JSON.stringify([
    ids.map((id) => index.user(id)),
    ...Object.values(index.perms).map((perm) => [0, perm.length - 1].map((at) => index.row(perm.slots[at]))),
    index.size,
  ]);
const first = rowsOf(T[0].index);
for (const t of T.slice(1)) if (rowsOf(t.index) !== first) bad++;
console.log(`${users} users, ${rewrites} rewrites, ${bad} mismatches`);
// The dumps: <out>.<n> (callgrind numbers them in order), one per phase.
const dir = dirname(out);
const dumps = readdirSync(dir)
  .filter((f) => f.startsWith(`${basename(out)}.`) && /\.\d+$/.test(f))
  .map((f) => `${dir}/${f}`)
  .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
  .slice(-phases.length);
for (const [p, dump] of dumps.entries()) {
  const total = Number(/^totals: (\d+)/m.exec(readFileSync(dump, 'utf8'))?.[1] ?? NaN);
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', dump], { maxBuffer: 1 << 26 }).toString();
  const shifts = annotated
    .split('\n')
    .filter((l) => l.includes('Builtin_TypedArrayPrototypeCopyWithin') && !l.includes('Builtins_'))
    .reduce((max, l) => Math.max(max, Number(l.trim().split(/\s+/)[0].replace(/,/g, ''))), 0);
  const { tree, applies } = phases[p];
  console.log(
    `${tree}: ${Math.round(total / applies)} instructions per apply, ${Math.round((total - shifts) / applies)} outside relocate's shifts (${Math.round(shifts / applies)} in them)`,
  );
}
