// What one UPDATE of a user's status and age costs the database, as a PATCH writes it (issues 32 and
// 37): the same statement with the users table's triggers, one transaction each, on a copy of a
// dataset (never the shared one: it writes).
//
//   node bench/update-cost.mjs sqlite <copy.db> [updates]     CPU per UPDATE (in process), WAL pages
//                                                              per UPDATE, and the checkpoint's CPU per UPDATE
//   node bench/update-cost.mjs postgres <url> [updates] [--distinct] [--seed=N] [--checkpoint] [--waldump]
//                                                            time per UPDATE, the backend's CPU, WAL bytes,
//                                                              records and full-page images per UPDATE, and
//                                                              how many were HOT
//
// 1,000 users spread over the table (a fixed sequence) are cycled, status and age changed each time.
// --distinct (PostgreSQL): each UPDATE a user not updated before in the run, drawn at random (a fixed
// seed) from the whole table, as the bench's PATCH phases send them (bench/lib/mix.mjs generateMix): the
// first update of a row since the table was loaded or rewritten, the one a full page cannot keep HOT.
// --seed=N: another draw of them (42 unless told). Runs compared on one copy rewritten between them
// (CLUSTER, VACUUM FULL) each need their own: a rewrite keeps the rows in their physical order, so the
// users a run moved to other pages would sit together at the table's end for the next run.
// --checkpoint (PostgreSQL, superuser): a CHECKPOINT before the measured updates, so that each page's
// first change after it writes its full image as it would after any checkpoint (with full_page_writes).
// The WAL figures are the cluster's (pg_stat_wal): run it alone (flock /tmp/bench.lock).
// --waldump (PostgreSQL on this machine, as a user who can read its pg_wal): also the WAL of the
// measured transactions alone, from pg_waldump over the run's LSN range, each record counted by its
// transaction id (the updated rows' xmin): what other sessions wrote meanwhile is left out (and so are
// records without a transaction id, such as a page prune, counted apart as `untagged`).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const require = createRequire(import.meta.url);
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const [backend, target, n = '2000'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const distinct = flags.includes('--distinct');
const checkpointFirst = flags.includes('--checkpoint');
const waldump = flags.includes('--waldump');
const seed = Number(flags.find((f) => f.startsWith('--seed='))?.slice('--seed='.length) ?? 42);
const updates = Number(n);
if (!['sqlite', 'postgres'].includes(backend) || !target || !(updates > 0)) {
  console.error('usage: node bench/update-cost.mjs sqlite <copy.db> [updates] | postgres <url> [updates] [--distinct] [--seed=N] [--checkpoint] [--waldump]');
  process.exit(2);
}

const COLUMNS = 'id, first_name, last_name, email, age, status, country, version';
/** 1,000 ids spread over 1..maxId (a fixed linear sequence). */
const idsOf = (maxId) => Array.from({ length: 1000 }, (_, i) => 1 + ((i * 7919 + 13) % maxId));
/** `count` distinct ids drawn at random from 1..maxId (a fixed seed: the same ones every run). */
function distinctIdsOf(maxId, count) {
  let state = seed;
  const next = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const ids = new Set();
  while (ids.size < Math.min(count, maxId)) ids.add(1 + Math.floor(next() * maxId));
  return [...ids];
}
const change = (i) => [i % 2 === 0 ? 'inactive' : 'active', 18 + (i % 60)];
const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

if (backend === 'sqlite') {
  const Database = require('better-sqlite3');
  const db = new Database(target);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // The checkpoint measured apart (the service's cluster primary runs it PASSIVE on its own).
  db.pragma('wal_autocheckpoint = 0');
  const maxId = db.prepare('select max(id) as m from users').get().m;
  const ids = idsOf(maxId);
  const update = db.prepare(`update users set status = ?, age = ?, version = version + 1 where id = ? returning ${COLUMNS}`);
  const checkpoint = () => db.pragma('wal_checkpoint(PASSIVE)')[0];
  db.pragma('wal_checkpoint(TRUNCATE)');
  const batch = 100;
  const rows = [];
  for (let done = 0, i = 0; done < updates + 200; done += batch) {
    const t0 = cpuUs();
    for (let k = 0; k < batch; k++, i++) update.get(...change(i), ids[i % ids.length]);
    const t1 = cpuUs();
    const { log } = checkpoint();
    const t2 = cpuUs();
    // The first 200 warm the pages and statements.
    if (done >= 200) rows.push({ update: (t1 - t0) / batch, pages: log / batch, checkpoint: (t2 - t1) / batch });
  }
  const mean = (k) => rows.reduce((s, r) => s + r[k], 0) / rows.length;
  const sorted = (k) => rows.map((r) => r[k]).sort((a, b) => a - b);
  const median = (k) => sorted(k)[rows.length >> 1];
  console.log(
    JSON.stringify({
      backend,
      updates: rows.length * batch,
      indexesOnUsers: db.prepare("select count(*) as n from sqlite_master where type = 'index' and tbl_name = 'users'").get().n,
      updateCpuUs: { mean: +mean('update').toFixed(1), median: +median('update').toFixed(1) },
      walPagesPerUpdate: +mean('pages').toFixed(1),
      checkpointCpuUs: { mean: +mean('checkpoint').toFixed(1), median: +median('checkpoint').toFixed(1) },
    }),
  );
  db.close();
} else {
  const pg = require('pg');
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  const q = async (text, values) => (await client.query(text, values)).rows;
  const [{ pid, m: maxId }] = await q('select pg_backend_pid() as pid, max(id) as m from users');
  const ids = distinct ? distinctIdsOf(maxId, updates + 200) : idsOf(maxId);
  if (distinct && ids.length < updates + 200) throw new Error(`--distinct: ${updates + 200} updates, ${ids.length} users`);
  /** The backend's CPU so far, in us (utime + stime, clock ticks of 10 ms). */
  const backendCpu = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  };
  const stats = async () => {
    await q('select pg_stat_force_next_flush()');
    const [r] = await q("select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_user_tables where relid = 'users'::regclass");
    return r;
  };
  const text = `update users set status = $1, age = $2, version = version + 1 where id = $3 returning ${COLUMNS}`;
  for (let i = 0; i < 200; i++) await q(text, [...change(i), ids[i % ids.length]]);
  if (checkpointFirst) await q('checkpoint');
  const wal = async () => (await q('select wal_records::bigint as records, wal_fpi::bigint as fpi, wal_bytes::bigint as bytes from pg_stat_wal'))[0];
  const before = await stats();
  const wal0 = await wal();
  const [{ lsn: lsn0 }] = await q('select pg_current_wal_lsn()::text as lsn');
  const c0 = backendCpu();
  const times = [];
  for (let i = 200; i < 200 + updates; i++) {
    const t = process.hrtime.bigint();
    await q(text, [...change(i), ids[i % ids.length]]);
    times.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  const c1 = backendCpu();
  const [{ bytes }] = await q('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint as bytes', [lsn0]);
  const [{ lsn: lsn1 }] = await q('select pg_current_wal_lsn()::text as lsn');
  const after = await stats();
  const wal1 = await wal();
  let own;
  if (waldump) {
    const measured = ids.slice(200, 200 + updates);
    const xids = new Set((await q('select xmin::text as x from users where id = any($1::int[])', [measured])).map((r) => r.x));
    const [{ dir }] = await q("select current_setting('data_directory') as dir");
    const bin = (await q("select setting from pg_config where name = 'BINDIR'").catch(() => [{ setting: '' }]))[0]?.setting;
    const r = spawnSync(bin ? `${bin}/pg_waldump` : 'pg_waldump', ['-p', `${dir}/pg_wal`, '-s', lsn0, '-e', lsn1], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    if (r.status !== 0 && !r.stdout) throw new Error(`pg_waldump: ${r.stderr || r.error}`);
    own = { records: 0, bytes: 0, fpi: 0, fpiBytes: 0, untagged: { records: 0, bytes: 0 }, byKind: {} };
    for (const line of r.stdout.split('\n')) {
      const m = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*(\d+)\/\s*(\d+), tx:\s*(\d+), .*?desc: (\S+)/.exec(line);
      if (!m) continue;
      const [, rmgr, rec, tot, tx, desc] = m;
      if (tx === '0') {
        own.untagged.records++;
        own.untagged.bytes += Number(tot);
        continue;
      }
      if (!xids.has(tx)) continue;
      own.records++;
      own.bytes += Number(tot);
      const fpis = (line.match(/ FPW/g) ?? []).length;
      own.fpi += fpis;
      if (fpis) own.fpiBytes += Number(tot) - Number(rec);
      const kind = `${rmgr}/${desc}`;
      own.byKind[kind] = (own.byKind[kind] ?? 0) + 1;
    }
    const per = (v) => +(v / updates).toFixed(2);
    own = {
      transactions: xids.size,
      recordsPerUpdate: per(own.records),
      bytesPerUpdate: Math.round(own.bytes / updates),
      fpiPerUpdate: per(own.fpi),
      fpiBytesPerUpdate: Math.round(own.fpiBytes / updates),
      recordsPerUpdateByKind: Object.fromEntries(
        Object.entries(own.byKind)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => [k, per(v)]),
      ),
      untaggedPerUpdate: { records: per(own.untagged.records), bytes: Math.round(own.untagged.bytes / updates) },
    };
  }
  const [{ n: indexes }] = await q("select count(*)::int as n from pg_index where indrelid = 'users'::regclass");
  const [{ fillfactor }] = await q("select coalesce(array_to_string(reloptions, ','), '') as fillfactor from pg_class where oid = 'users'::regclass");
  const [{ relpages, size }] = await q(
    "select (pg_relation_size('users') / current_setting('block_size')::int)::int as relpages, pg_relation_size('users')::bigint as size",
  );
  times.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      backend,
      updates,
      indexesOnUsers: indexes,
      reloptions: fillfactor,
      timeUs: {
        median: Math.round(times[updates >> 1]),
        p90: Math.round(times[Math.floor(updates * 0.9)]),
        mean: Math.round(times.reduce((s, t) => s + t, 0) / updates),
      },
      backendCpuUs: Math.round((c1 - c0) / updates),
      walBytesPerUpdate: Math.round(Number(bytes) / updates),
      // pg_stat_wal counts a backend's WAL when it reports its statistics (flushed by stats() above).
      walRecordsPerUpdate: +((wal1.records - wal0.records) / updates).toFixed(1),
      walFpiPerUpdate: +((wal1.fpi - wal0.fpi) / updates).toFixed(2),
      users: { pages: relpages, bytes: Number(size) },
      ...(distinct ? { seed } : {}),
      distinct,
      checkpoint: checkpointFirst,
      ...(own ? { ownWal: own } : {}),
      hot: `${after.hot - before.hot} of ${after.upd - before.upd}`,
    }),
  );
  await client.end();
}
