#!/usr/bin/env node
/* global fetch, setInterval, clearInterval */
// Soak: the built service under mixed reads and writes for a bounded time, reporting errors,
// throughput and the server's memory (RSS) over time. Exits 1 on any error, non-2xx answer or
// memory that keeps growing through the run.
//
//   npm run soak                      # 30 s, 64 connections
//   SOAK_SECONDS=120 SOAK_CONNECTIONS=128 npm run soak
//
// Listens on 127.0.0.1 only, on a free port, with a throwaway database; everything is stopped at the end.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 30);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 64);
const TOKEN = 'soak-admin-token-0123456789abcdef';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

const freePort = () =>
  new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

const rssMb = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

async function start(port, dir) {
  const child = spawn(process.execPath, ['dist/music-catalogue.mjs', 'serve'], {
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      CATALOGUE_ADMIN_TOKEN: TOKEN,
      DATABASE_URL: `sqlite:${join(dir, 'soak.db')}`,
    },
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  child.stderr.pipe(process.stderr);
  await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => d.toString().includes('listening on') && resolve());
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return child;
}

async function seed(url) {
  const post = async (path, body) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`seed ${path}: ${res.status}`);
    return res.json();
  };
  const artist = await post('/artists', { name: 'Seed artist', image: 'https://img.example.com/seed.jpg' });
  for (let i = 0; i < 20; i++) await post(`/artists/${artist.id}/albums`, { name: `Seed album ${i}`, year: 1990 + i, image: 'https://img.example.com/a.jpg' });
  return artist.id;
}

/** One cycle per connection: 2 writes, 6 reads; ids flow from the writes into the reads. */
function requests(seedId) {
  const own = (suffix) => (req, ctx) => ({ ...req, path: `/artists/${ctx.artistId}${suffix}` });
  const remember = (status, body, ctx) => {
    if (status === 201) ctx.artistId = JSON.parse(body).id;
  };
  let n = 0;
  return [
    {
      method: 'POST',
      path: '/artists',
      headers,
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `Soak ${n++}`, image: 'https://img.example.com/s.jpg' }) }),
      onResponse: remember,
    },
    { method: 'GET', headers, setupRequest: own('') },
    { method: 'GET', path: `/artists/${seedId}/albums`, headers },
    {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Soak album', year: 2001, image: 'https://img.example.com/sa.jpg' }),
      setupRequest: own('/albums'),
    },
    { method: 'GET', headers, setupRequest: own('/albums') },
    { method: 'GET', path: `/artists/${seedId}`, headers },
    { method: 'GET', path: '/ready' },
    { method: 'GET', path: `/artists/${seedId}`, headers },
  ];
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'mc-soak-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await start(port, dir);
  try {
    const seedId = await seed(url);
    const samples = [{ t: 0, rss: rssMb(server.pid), rps: 0 }];
    let second = 0;
    let sinceLast = 0;
    const instance = autocannon({ url, connections: CONNECTIONS, duration: SECONDS, requests: requests(seedId) });
    instance.on('response', () => sinceLast++);
    const sampler = setInterval(() => {
      second += 5;
      samples.push({ t: second, rss: rssMb(server.pid), rps: Math.round(sinceLast / 5) });
      sinceLast = 0;
      const s = samples.at(-1);
      process.stdout.write(`t=${String(s.t).padStart(3)}s  rss=${s.rss.toFixed(1)} MB  req/s=${s.rps}\n`);
    }, 5_000);
    const result = await instance;
    clearInterval(sampler);

    const ready = await fetch(`${url}/ready`);
    const third = samples[Math.max(1, Math.floor(samples.length / 3))].rss;
    const last = samples.at(-1).rss;
    const peak = Math.max(...samples.map((s) => s.rss));
    // Memory settles after warm-up; a leak keeps climbing through the last two thirds.
    const growing = samples.length >= 4 && last > third * 1.25;
    const report = {
      seconds: SECONDS,
      connections: CONNECTIONS,
      requests: result.requests.total,
      'req/s (mean)': result.requests.average,
      'latency ms p50/p99/max': `${result.latency.p50}/${result.latency.p99}/${result.latency.max}`,
      '2xx': result['2xx'],
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([k, v]) => [k, v.count])),
      'rss MB start/third/end/peak': `${samples[0].rss.toFixed(1)}/${third.toFixed(1)}/${last.toFixed(1)}/${peak.toFixed(1)}`,
      'ready after': ready.status,
    };
    process.stdout.write(`\n${JSON.stringify(report, null, 2)}\n`);
    const ok = result.errors === 0 && result.non2xx === 0 && result.timeouts === 0 && ready.status === 200 && !growing;
    process.stdout.write(ok ? 'soak: OK\n' : `soak: FAILED${growing ? ' (memory kept growing)' : ''}\n`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`soak: ${err.stack ?? err}\n`);
  process.exit(1);
});
