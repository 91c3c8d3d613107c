// What one UPDATE of a user's status and age costs the database, as a PATCH writes it (issues 32 and
// 37): the same statement with the users table's triggers, one transaction each, on a copy of a
// dataset (never the shared one: it writes).
//
//   node bench/update-cost.mjs sqlite <copy.db> [updates]     CPU per UPDATE (in process), WAL pages
//                                                              per UPDATE, and the checkpoint's CPU per UPDATE
//   node bench/update-cost.mjs postgres <url> [updates]      time per UPDATE, the backend's CPU and WAL
//                                                              bytes per UPDATE, and how many were HOT
//
// 1,000 users spread over the table (a fixed sequence) are cycled, status and age changed each time.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const [backend, target, n = '2000'] = process.argv.slice(2);
const updates = Number(n);
if (!['sqlite', 'postgres'].includes(backend) || !target || !(updates > 0)) {
  console.error('usage: node bench/update-cost.mjs sqlite <copy.db> [updates] | postgres <url> [updates]');
  process.exit(2);
}

const COLUMNS = 'id, first_name, last_name, email, age, status, country, version';
/** 1,000 ids spread over 1..maxId (a fixed linear sequence). */
const idsOf = (maxId) => Array.from({ length: 1000 }, (_, i) => 1 + ((i * 7919 + 13) % maxId));
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
  const ids = idsOf(maxId);
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
  const before = await stats();
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
  const after = await stats();
  const [{ n: indexes }] = await q("select count(*)::int as n from pg_index where indrelid = 'users'::regclass");
  const [{ fillfactor }] = await q("select coalesce(array_to_string(reloptions, ','), '') as fillfactor from pg_class where oid = 'users'::regclass");
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
      hot: `${after.hot - before.hot} of ${after.upd - before.upd}`,
    }),
  );
  await client.end();
}
