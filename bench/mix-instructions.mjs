// node bench/mix-instructions.mjs [--file <dataset.db>] [--count 3000] [--seed 14] <tree>...
// The CPU instructions per request of the benchmark's distinct read mix (bench/lib/mix.mjs generateMix) on
// SQLite, per built tree (a checkout with `npm run build` done: its dist/music-catalogue.mjs). NOT yet steady:
// the count follows the measured window's wall-clock length (1.34M to 1.79M a request for one build, alone or
// beside another run; bench/README.md), likely the service's timers; compare runs made alike. For each tree, in the order given (pass
// A B B A to see the spread): the dataset (default: the bench's 1M file; bench/lib/dataset.mjs seeds a
// smaller one) is copied to a scratch file, the service started on it with WORKERS=1 under
// `valgrind --tool=callgrind --instr-atstart=no` (instrumentation off: a near-native start) and
// `node --single-threaded` (V8 compiles and collects on the main thread: without it, its background threads'
// share varied the count by ±20% between runs of one build, with their timing), tokens made,
// and the users index waited for (/metrics users_index_ready). Then `--count` distinct reads are sent one
// at a time to warm it (JIT, statement caches), and `--count` further distinct reads (the next ones in the
// mix: a read sent again would be answered from the response cache, which is not what the mix measures)
// with instrumentation on only around them (callgrind_control -i on/off, then a dump): their instructions
// (all the service's threads) over `--count` is the figure. Also printed: a sha256 over every answer of
// both lists (status, X-Total-Count, Link, body), equal across trees when the answers are.
// Needs valgrind and callgrind_control on the PATH. Takes a few minutes a tree.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { workingCopy } from './lib/dataset.mjs';
import { DEFAULT_MIX_SEED, MIX_KINDS, generateMix } from './lib/mix.mjs';
import { mixDataset } from './lib/mix-run.mjs';
import { indexReady } from './lib/profile.mjs';
import { startProcess, stopProcess } from './lib/procs.mjs';
import { createTokens, serviceEnv } from './lib/service.mjs';

const here = new URL('.', import.meta.url).pathname;
const { values: o, positionals: trees } = parseArgs({
  allowPositionals: true,
  options: {
    file: { type: 'string', default: join(here, 'results/dataset-u1000000-a10000x10x10-s42.db') },
    count: { type: 'string', default: '3000' },
    seed: { type: 'string', default: String(DEFAULT_MIX_SEED) },
  },
});
if (trees.length === 0) throw new Error('usage: node bench/mix-instructions.mjs [--file f.db] [--count n] [--seed s] <built tree>...');
if (spawnSync('callgrind_control', ['-h']).error) throw new Error('callgrind_control (valgrind) is not on the PATH');
const count = Number(o.count);

const { reads } = generateMix({ seed: Number(o.seed), count: 2 * count, probesPerKind: 0, patches: 0, ...mixDataset(o.file, { writeAlbumId: -1 }) });
const warm = reads.slice(0, count);
const measured = reads.slice(count);
const scopeOf = Object.fromEntries(MIX_KINDS.map((k) => [k.kind, k.scope]));

/** One GET (on a kept-alive connection): { status, total, link, body }. */
function get(agent, base, path, token) {
  return new Promise((done, fail) => {
    const req = http.get(`${base}${path}`, { agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode, total: res.headers['x-total-count'], link: res.headers.link, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
  });
}

/** The reads one at a time, each answer into `hash`: how many answered each status. */
async function replay(base, tokens, list, hash) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const statuses = {};
  for (const r of list) {
    const a = await get(agent, base, r.path, tokens[scopeOf[r.kind]]);
    statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    hash
      .update(`${r.path}\n${a.status}\n${a.total ?? ''}\n${a.link ?? ''}\n`)
      .update(a.body)
      .update('\n');
  }
  agent.destroy();
  return statuses;
}

/** The instructions (Ir) a callgrind dump counted. */
function irOf(file) {
  const m = /^totals:\s+(\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`no totals in ${file}`);
  return Number(m[1]);
}

const work = mkdtempSync(join(tmpdir(), 'mix-instructions-'));
try {
  for (const [i, treeArg] of trees.entries()) {
    const tree = resolve(treeArg);
    const cli = join(tree, 'dist/music-catalogue.mjs');
    if (!existsSync(cli)) throw new Error(`${cli} is missing: npm run build in ${tree}`);
    const db = workingCopy(o.file, work, `run-${i}.db`);
    const out = join(work, `callgrind.${i}`);
    const env = serviceEnv(`sqlite:${db}`, '1');
    const service = await startProcess({
      name: `service (${tree})`,
      command: 'valgrind',
      args: ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}.%p`, process.execPath, '--single-threaded', cli, 'serve'],
      env,
      readyPath: '/ready',
      timeoutMs: 600_000,
    });
    try {
      const tokens = await createTokens(service.base);
      await indexReady(service.base, tokens, Date.now() + 600_000);
      const hash = createHash('sha256');
      const warmStatuses = await replay(service.base, tokens, warm, hash);
      // vgdb names its pipes after $HOST, which the service's environment sets (its listening host).
      const cc = (...args) => execFileSync('callgrind_control', [...args, String(service.pid)], { stdio: 'pipe', env: { ...process.env, HOST: env.HOST } });
      cc('-i', 'on');
      const statuses = await replay(service.base, tokens, measured, hash);
      cc('-i', 'off');
      cc('-d', 'measured');
      const dump = readdirSync(work)
        .filter((f) => f === `${basename(out)}.${service.pid}` || f.startsWith(`${basename(out)}.${service.pid}.`))
        .sort()
        .at(-1);
      if (!dump) throw new Error(`no callgrind dump of ${service.pid} in ${work}`);
      const ir = irOf(join(work, dump));
      console.log(
        `${tree}: ${(ir / count).toFixed(0)} instructions/request (${ir} over ${count} reads, seed ${o.seed}, ${basename(o.file)}); ` +
          `statuses warm ${JSON.stringify(warmStatuses)} measured ${JSON.stringify(statuses)}; answers sha256 ${hash.digest('hex')}`,
      );
    } finally {
      await stopProcess(service);
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
