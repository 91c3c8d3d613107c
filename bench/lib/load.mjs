// Runs one bounded load against one base URL with wrk (preferred) or autocannon (fallback), and returns
// { rps, p50, p99, requests, errors, non2xx, socketErrors } with latencies in milliseconds.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function hasWrk() {
  try {
    execFileSync('wrk', ['-v'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    // wrk -v exits 1 after printing its version: only a missing binary is an ENOENT.
    return err.code !== 'ENOENT';
  }
}

/** wrk if present, else installed from Debian (as root), else autocannon (a pinned devDependency). */
export function ensureTool(preferred, log) {
  if (preferred === 'autocannon') return 'autocannon';
  if (hasWrk()) return 'wrk';
  if (process.getuid?.() === 0) {
    log('wrk not found: installing it from Debian (apt-get update && apt-get install -y wrk)');
    try {
      execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 180_000 });
      execFileSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'ignore', timeout: 180_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
      if (hasWrk()) return 'wrk';
    } catch (err) {
      log(`installing wrk failed (${err.message.split('\n')[0]})`);
    }
  }
  if (preferred === 'wrk') throw new Error('wrk was asked for and cannot be installed');
  log('using autocannon instead of wrk');
  return 'autocannon';
}

const lua = (s) => `[==[${s}]==]`;

/**
 * A wrk script that cycles through pre-formatted requests and prints its summary as one JSON line.
 * The requests are formatted in init by functions of at most 500 each (a realistic mix has 10,000+
 * distinct requests, more than one Lua function's constants and registers comfortably hold).
 */
function wrkScript(requests) {
  const formatted = requests.map((r) => {
    const headers = Object.entries(r.headers ?? {})
      .map(([k, v]) => `[ ${lua(k)} ] = ${lua(v)}`)
      .join(',');
    return `r[#r + 1] = wrk.format(${lua(r.method)}, ${lua(r.path)}, {${headers}}, ${r.body === undefined ? 'nil' : lua(r.body)})`;
  });
  const chunks = [];
  for (let i = 0; i < formatted.length; i += 500) chunks.push(`function(r)\n${formatted.slice(i, i + 500).join('\n')}\nend`);
  return `local reqs = {}
local n = 0
local i = 0
local parts = {
${chunks.join(',\n')}
}
init = function(args)
  for _, add in ipairs(parts) do add(reqs) end
  n = #reqs
end
request = function()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH_JSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

function runWrk(base, requests, { connections, duration }) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const script = join(dir, 'load.lua');
  writeFileSync(script, wrkScript(requests));
  const args = ['-t1', `-c${connections}`, `-d${duration}s`, '--timeout', '10s', '-s', script, base];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    // Bounded: wrk stops by itself after the duration; this is the guard if it does not.
    const guard = setTimeout(() => child.kill('SIGKILL'), (duration + 20) * 1000);
    child.on('exit', () => {
      clearTimeout(guard);
      rmSync(dir, { recursive: true, force: true });
      const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
      if (!line) return reject(new Error(`wrk gave no summary: ${out.slice(0, 500)}`));
      const s = JSON.parse(line.slice('BENCH_JSON '.length));
      const socketErrors = s.connect + s.read + s.write + s.timeout;
      resolve({
        requests: s.requests,
        rps: s.requests / (s.duration_us / 1e6),
        p50: s.p50 / 1000,
        p99: s.p99 / 1000,
        non2xx: s.status,
        socketErrors,
        errors: s.status + socketErrors,
      });
    });
  });
}

async function runAutocannon(base, requests, { connections, duration }) {
  const { default: autocannon } = await import('autocannon');
  let i = 0;
  const result = await autocannon({
    url: base,
    connections,
    duration,
    timeout: 10,
    requests: [
      {
        setupRequest: (req) => {
          const r = requests[i++ % requests.length];
          return { ...req, method: r.method, path: r.path, headers: r.headers ?? {}, body: r.body };
        },
      },
    ],
  });
  const socketErrors = result.errors + result.timeouts;
  return {
    requests: result.requests.total,
    rps: result.requests.total / (duration || 1),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    socketErrors,
    errors: result.non2xx + socketErrors,
  };
}

export function runLoad(tool, base, requests, opts) {
  return tool === 'wrk' ? runWrk(base, requests, opts) : runAutocannon(base, requests, opts);
}
