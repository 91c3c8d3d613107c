// Statements per request by kind, and CPU per request (the service with its workers; on PostgreSQL
// also the database's own sessions of the service), on the mix's requests (issue 32). Not a
// throughput figure: requests are sent from this process, 32 at a time.
//
//   npm run build
//   flock /tmp/bench.lock node bench/pg-statements.mjs postgres://postgres@127.0.0.1:5432/music_bench
//   flock /tmp/bench.lock node bench/pg-statements.mjs sqlite            # CPU only (no pg statements)
//
// The PostgreSQL database must hold the bench's 100,000-user dataset (a --quick run of
// bench/run.mjs with --postgres seeds it). Options (environment): PER_KIND (requests per kind, 1500),
// ROUNDS (alternating reads-only / 1-in-20 PATCH phases of 3,000 requests, 3), TOP (statement texts
// shown per phase, 12), READS_ONLY=1 (no PATCH phases: a shared database only read), PATCH_ONLY=1 (two read phases to warm up, then 600 PATCHes alone). The
// users a PATCH phase changed get their dataset status and age back at the end.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startService, createTokens, discoverIds } from './lib/service.mjs';
import { stopProcess, childrenOf } from './lib/procs.mjs';
import { mixDataset, buildMix, mixRequests, originalsOf } from './lib/mix-run.mjs';
import { indexReady } from './lib/profile.mjs';

const target = process.argv[2];
if (!target) throw new Error('usage: node bench/pg-statements.mjs postgres://... | sqlite');
const PER_KIND = Number(process.env.PER_KIND ?? 1500);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const TOP = Number(process.env.TOP ?? 12);
const READS_ONLY = Boolean(process.env.READS_ONLY);
const DATASET = process.env.DATASET ?? 'bench/results/dataset-u100000-a1000x10x10-s42.db';
const CONNECTIONS = 32;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-statements-'));
const countsDir = path.join(work, 'counts');
fs.mkdirSync(countsDir);
let databaseUrl = target;
if (target === 'sqlite') {
  fs.copyFileSync(DATASET, path.join(work, 'copy.db'));
  databaseUrl = `sqlite:${path.join(work, 'copy.db')}`;
}
const dbName = target === 'sqlite' ? undefined : new URL(target).pathname.slice(1);

// The service gets no environment but its own (bench/lib/service.mjs): the counts' directory comes with the preload.
const preload = path.join(work, 'preload.mjs');
fs.writeFileSync(
  preload,
  `process.env.PG_STATEMENTS_DIR = ${JSON.stringify(countsDir)};\nawait import(${JSON.stringify(new URL('./lib/count-pg-statements.mjs', import.meta.url).href)});\n`,
);
const svc = await startService('service', databaseUrl, ['--import', preload], undefined, 'auto');

/** utime + stime ticks of these processes. */
function ticksOf(pids) {
  let sum = 0;
  for (const pid of pids) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      sum += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return sum;
}
const serviceTicks = () => ticksOf([svc.pid, ...childrenOf(svc.pid)]);
/** The database's sessions of this service (by database name: use a database of its own). */
function backendTicks() {
  if (!dbName) return 0;
  const url = new URL(target);
  const out = execFileSync('psql', [
    '-h',
    url.hostname,
    '-p',
    url.port || '5432',
    '-U',
    decodeURIComponent(url.username) || 'postgres',
    '-Atc',
    `select pid from pg_stat_activity where datname = '${dbName.replaceAll("'", "''")}' and pid <> pg_backend_pid()`,
  ]).toString();
  return ticksOf(out.trim().split(/\s+/).filter(Boolean).map(Number));
}
async function counts() {
  await new Promise((resolve) => setTimeout(resolve, 600));
  const all = new Map();
  for (const file of fs.readdirSync(countsDir)) {
    if (!file.endsWith('.json')) continue;
    for (const [text, n] of JSON.parse(fs.readFileSync(path.join(countsDir, file), 'utf8'))) all.set(text, (all.get(text) ?? 0) + n);
  }
  return all;
}

try {
  const tokens = await createTokens(svc.base);
  // Every worker's users index loaded first: until then users lists read the database, and the load's own statements count in the first phases.
  await indexReady(svc.base, tokens);
  const ids = await discoverIds(svc.base, tokens, Number(process.env.ARTISTS ?? 1000));
  const dataset = mixDataset(DATASET, { writeAlbumId: ids.writeAlbumId });
  const mix = buildMix({ mixSeed: 99, mixRequests: 40_000, mixProbes: 0 }, dataset);
  const reqs = mixRequests(mix, tokens, ids);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const send = (r) =>
    new Promise((resolve, reject) => {
      const req = http.request(new URL(r.path, svc.base), { method: r.method, headers: r.headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end(r.body);
    });
  async function run(list) {
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < list.length) if ((await send(list[next++])) >= 300) failed++;
      }),
    );
    return failed;
  }

  let at = 0;
  let patched = 0;
  const take = (n) => reqs.reads.slice(at, (at += n));
  const withPatches = (reads) => reads.flatMap((r, i) => (i % 19 === 18 ? [r, reqs.patch[patched++]] : [r]));
  await run(take(2000)); // every worker compiles and prepares
  const phases = [];
  if (process.env.PATCH_ONLY) {
    phases.push(['reads only', take(3000)], ['reads only', take(3000)], ['PATCHes only', reqs.patch.slice(0, 600)]);
    patched = 600;
  } else {
    const byKind = {};
    for (const r of mix.reads.slice(20_000)) (byKind[r.kind] ??= []).push(reqs.reads[mix.reads.indexOf(r)]);
    for (const [kind, list] of Object.entries(byKind)) phases.push([kind, list.slice(0, PER_KIND)]);
    for (let round = 0; round < ROUNDS; round++) {
      phases.push(['reads only', take(3000)]);
      if (!READS_ONLY) phases.push(['reads + 1 in 20 a user PATCH', withPatches(take(2850))]);
    }
  }
  for (const [name, list] of phases) {
    const before = await counts();
    const s0 = serviceTicks();
    const b0 = backendTicks();
    const failed = await run(list);
    const s1 = serviceTicks();
    const b1 = backendTicks();
    const after = await counts();
    const rows = [...after]
      .map(([text, n]) => [n - (before.get(text) ?? 0), text])
      .filter(([n]) => n > 0)
      .sort((a, b) => b[0] - a[0]);
    const total = rows.reduce((sum, [n]) => sum + n, 0);
    const us = (ticks) => Math.round((ticks * 10_000) / list.length);
    console.log(
      `\n${name}: ${list.length} requests (${failed} not 2xx), ${(total / list.length).toFixed(2)} statements a request, CPU a request: service ${us(s1 - s0)} us, database sessions ${us(b1 - b0)} us`,
    );
    for (const [n, text] of rows.slice(0, TOP)) console.log(`  ${(n / list.length).toFixed(3)}  ${text.replace(/\s+/g, ' ').slice(0, 140)}`);
  }
  const originals = originalsOf(
    DATASET,
    reqs.patch.slice(0, patched).map((p) => p.userId),
  );
  for (const [id, original] of originals) await send(reqs.restore(id, original));
} finally {
  await stopProcess(svc);
  fs.rmSync(work, { recursive: true, force: true });
}
