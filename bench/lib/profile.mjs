// `npm run bench -- --profile`: the service under `node --cpu-prof`, loaded with GET an artist, the users
// list and POST a song (or the scenarios given with --only, mix phases included), and the hottest functions of each profile
// by self time.
import { get } from 'node:http';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runLoad } from './load.mjs';
import { UNBUNDLED_CLI, workingCopy } from './dataset.mjs';
import { stopProcess } from './procs.mjs';
import { startService, createTokens, discoverIds, usersAvailable } from './service.mjs';
import { buildScenarios } from './scenarios.mjs';
import { MIX_LATENCY, MIX_PHASES, buildMix, mixDataset, mixRequests, newCursor, phaseList } from './mix-run.mjs';

function where(url, line) {
  const path = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
  if (pkg) return { file: `${pkg}/${path.split(`${pkg}/`).pop()}:${line + 1}`, group: pkg };
  if (path.includes('/dist/')) return { file: `${path.split('/dist/').pop()}:${line + 1}`, group: 'service (dist/src)' };
  if (path.startsWith('node:')) return { file: `${path}:${line + 1}`, group: 'node internals' };
  return { file: path ? `${path}:${line + 1}` : '(native)', group: path ? 'other' : 'native / GC / idle' };
}

/** Self time per function and per package, as shares of all samples. */
export function summarise(profile, top = 20) {
  const total = profile.nodes.reduce((n, node) => n + (node.hitCount ?? 0), 0) || 1;
  const fns = new Map();
  const groups = new Map();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (!hits) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const { file, group } = where(url, lineNumber);
    const key = `${functionName || '(anonymous)'} ${file}`;
    fns.set(key, (fns.get(key) ?? 0) + hits);
    const g = functionName === '(idle)' ? 'idle' : functionName === '(garbage collector)' ? 'GC' : group;
    groups.set(g, (groups.get(g) ?? 0) + hits);
  }
  const pct = (n) => `${((n / total) * 100).toFixed(1)}%`;
  const sorted = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return [
    'Self time by package:',
    ...sorted(groups)
      .slice(0, 12)
      .map(([g, n]) => `  ${pct(n).padStart(6)}  ${g}`),
    `Top ${top} functions by self time:`,
    ...sorted(fns)
      .slice(0, top)
      .map(([k, n]) => `  ${pct(n).padStart(6)}  ${k}`),
  ].join('\n');
}

/**
 * Waits until every worker's users index is ready (its /metrics says so on 12 new connections in a row,
 * spread over the workers by the cluster), so the profile measures the index, not SQL while it loads.
 */
export async function indexReady(base, tokens, deadline = Date.now() + 180_000) {
  const ask = () =>
    new Promise((resolvePromise, reject) => {
      const req = get(`${base}/metrics`, { agent: false, headers: { Authorization: `Bearer ${tokens.admin}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolvePromise(res.statusCode === 200 ? /^users_index_ready (\d)/m.exec(body)?.[1] : undefined));
      });
      req.on('error', reject);
    });
  let inARow = 0;
  while (inARow < 12) {
    if (Date.now() > deadline) throw new Error('--profile: the users index was not ready on every worker within 180 s');
    const ready = await ask();
    // No such metric (USERS_INDEX=off, or a build without it): nothing to wait for.
    if (ready === undefined) return;
    inARow = ready === '1' ? inARow + 1 : 0;
    if (ready !== '1') await new Promise((r) => setTimeout(r, 500));
  }
}

export async function profile(o, tool, pristine, work, artists, log) {
  const dir = resolve(work, 'profiles');
  const reports = [];
  for (const id of o.only ?? ['get-artist', 'users-p50', 'post-song']) {
    if (id === MIX_LATENCY) continue; // one request at a time: too few samples for a profile
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const url = o.postgres ?? `sqlite:${workingCopy(pristine, work, 'profile.db')}`;
    // One process (WORKERS=1 unless --workers says otherwise): every process writes a profile, each is summarised.
    const svc = await startService('service', url, ['--cpu-prof', `--cpu-prof-dir=${dir}`], UNBUNDLED_CLI, o.workers === 'auto' ? '1' : o.workers);
    try {
      const tokens = await createTokens(svc.base);
      const phase = MIX_PHASES.find((p) => p.id === id);
      if ((id.startsWith('users') || phase) && !(await usersAvailable(svc.base, tokens))) {
        log(`${id}: GET /users is not in this build, not profiled`);
        continue;
      }
      await indexReady(svc.base, tokens);
      const ids = await discoverIds(svc.base, tokens, artists);
      // A mix phase: its distinct requests from the start of the list, on a fresh copy of the dataset.
      const scenario = phase
        ? {
            connections: phase.connections ?? o.connections,
            requests: phaseList(mixRequests(buildMix(o, mixDataset(pristine, { writeAlbumId: ids.writeAlbumId })), tokens, ids), phase, newCursor()),
          }
        : buildScenarios({ ...ids, tokens, brazil: 'brazil', connections: o.connections }).find((s) => s.id === id);
      if (!scenario) throw new Error(`--profile: no scenario "${id}"`);
      const m = await runLoad(tool, svc.base, scenario.requests, { connections: scenario.connections, duration: Math.max(10, o.duration) });
      log(`${id}: ${m.rps.toFixed(0)} req/s under the profiler, p99 ${m.p99.toFixed(2)} ms`);
    } finally {
      await stopProcess(svc); // a graceful exit writes the profile
    }
    // One profile per process (the cluster's primary and each worker, by file name: when each exited, then its pid): each summarised.
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .sort();
    if (files.length === 0) throw new Error(`no .cpuprofile was written for ${id}`);
    files.forEach((file, i) => {
      const keep = join(work, files.length === 1 ? `${id}.cpuprofile` : `${id}.${i}.cpuprofile`);
      writeFileSync(keep, readFileSync(join(dir, file)));
      reports.push(`## ${id} (${keep}, open in Chrome DevTools)\n\n${summarise(JSON.parse(readFileSync(keep, 'utf8')))}\n`);
    });
  }
  const text = reports.join('\n');
  writeFileSync(join(work, '..', 'profile.md'), `# CPU profiles\n\n${text}`);
  process.stdout.write(`${text}\nWritten: bench/results/profile.md\n`);
}
