// node bench/index-memory.mjs <built tree> [dataset.db]: starts the built service of <built tree> on a copy
// of the dataset's SQLite file (default: this tree's 1M-user bench dataset) with WORKERS=auto (EXPECT: the
// workers, default 2), waits until every worker logged 'users index ready', prints /metrics' memory gauges
// and VmHWM / VmRSS / RssAnon / RssFile (the node binary's pages, shared) / RssShmem / Pss (MiB) of the primary and each worker. USERS_INDEX=off EXPECT=0 for the base line.
import { spawn, execSync } from 'node:child_process';
import { readFileSync, copyFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
const wt = process.argv[2];
const src = process.argv[3] ?? new URL('./results/dataset-u1000000-a10000x10x10-s42.db', import.meta.url).pathname;
const db = `${tmpdir()}/index-memory-${process.pid}.db`;
execSync(`sqlite3 ${src} 'pragma wal_checkpoint(truncate)' >/dev/null 2>&1 || true`);
copyFileSync(src, db);
if (existsSync(`${src}-wal`)) copyFileSync(`${src}-wal`, `${db}-wal`);
const port = 43000 + (process.pid % 1000);
const child = spawn(process.execPath, [`${wt}/bin/music-catalogue.js`, 'serve'], {
  env: {
    PATH: process.env.PATH,
    ...(process.env.MALLOC_MMAP_THRESHOLD_ ? { MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ } : {}),
    NODE_ENV: 'production',
    DATABASE_URL: `sqlite:${db}`,
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '0',
    CATALOGUE_ADMIN_TOKEN: 'x'.repeat(40),
    HOST: '127.0.0.1',
    WORKERS: process.env.WORKERS ?? 'auto',
    ...(process.env.USERS_INDEX ? { USERS_INDEX: process.env.USERS_INDEX } : {}),
    PORT: String(port),
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let readyLines = 0;
let log = '';
child.stdout.on('data', (d) => {
  log += d;
  readyLines = (log.match(/users index ready/g) ?? []).length;
});
const status = (pid) => {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const g = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)[1]) / 1024;
  let pss = NaN;
  try {
    pss = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))[1]) / 1024;
  } catch {
    // No smaps_rollup (kernels before 4.14): Pss left out.
  }
  return {
    hwm: g('VmHWM').toFixed(1),
    rss: g('VmRSS').toFixed(1),
    anon: g('RssAnon').toFixed(1),
    file: g('RssFile').toFixed(1),
    shmem: g('RssShmem').toFixed(1),
    pss: pss.toFixed(1),
  };
};
const kids = () => execSync(`pgrep -P ${child.pid} || true`).toString().trim().split(/\s+/).filter(Boolean).map(Number);
const t0 = Date.now();
const want = Number(process.env.EXPECT ?? 2);
let dead = false;
child.on('exit', () => (dead = true));
while (!dead && readyLines < want && Date.now() - t0 < 120000) await new Promise((r) => setTimeout(r, 100));
await new Promise((r) => setTimeout(r, 1000));
const m = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: 'Bearer ' + 'x'.repeat(40) } })
  .then((r) => r.text())
  .catch(() => '');
console.log('ready lines', readyLines, 'after', Date.now() - t0, 'ms');
console.log(
  (log.match(/.*users index ready.*/g) ?? [])
    .map((l) => {
      const j = JSON.parse(l);
      return `pid ${j.pid} users ${j.users} ms ${j.ms} bytes ${(j.bytes / 1048576).toFixed(1)}MB`;
    })
    .join('\n'),
);
console.log(
  m
    .split('\n')
    .filter((l) => /^(users_index_bytes|users_index_ready|nodejs_heap_size|process_resident|nodejs_external)/.test(l))
    .join('\n'),
);
console.log('primary', child.pid, JSON.stringify(status(child.pid)));
for (const k of kids()) console.log('worker', k, JSON.stringify(status(k)));
child.kill('SIGTERM');
await new Promise((r) => child.on('exit', r));
execSync(`rm -f ${db} ${db}-wal ${db}-shm`);
