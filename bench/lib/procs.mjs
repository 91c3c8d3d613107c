// Child processes of the benchmark: spawn on a free loopback port, wait for readiness, sample memory
// and CPU from /proc, and stop them (by their own pid only).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import http from 'node:http';

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function statusOf(url) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

/**
 * Spawns `command args` and polls `readyPath` until it answers `readyStatus`.
 * Returns { child, pid, base, readyMs, output() }; readyMs is spawn -> first ready answer.
 */
export async function startProcess({ name, command, args, env, readyPath, readyStatus = 200, timeoutMs = 120_000, port }) {
  port ??= await freePort();
  const started = process.hrtime.bigint();
  const child = spawn(command, args, { env: { PATH: process.env.PATH, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output = (output + d).slice(-20_000)));
  child.stderr.on('data', (d) => (output = (output + d).slice(-20_000)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited early:\n${output}`);
    const status = await statusOf(base + readyPath);
    if (readyStatus === 'any' ? status > 0 : status === readyStatus) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} was not ready within ${timeoutMs} ms:\n${output}`);
    }
    await sleep(5);
  }
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
  return { name, child, pid: child.pid, base, port, readyMs, output: () => output };
}

export async function stopProcess(proc, signal = 'SIGTERM') {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  const exited = new Promise((r) => proc.child.once('exit', r));
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** A "Key:   123 kB" field of a /proc text, in bytes (0 when absent). */
const kbField = (text, key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;

/** Resident memory of a process in bytes: current (VmRSS) and peak over its life (VmHWM). */
function memoryOfOne(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { rss: kbField(text, 'VmRSS'), hwm: kbField(text, 'VmHWM') };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

/** The processes whose parent is `pid` (the service's workers with WORKERS > 1). */
export function childrenOf(pid) {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return out;
}

/**
 * Memory of the service: of its largest process, the primary or one of its workers (each worker is
 * a whole service with its own heap, and the target is per process).
 */
export function memoryOf(pid) {
  let out = memoryOfOne(pid);
  for (const child of childrenOf(pid)) {
    const m = memoryOfOne(child);
    out = { rss: Math.max(out.rss, m.rss), hwm: Math.max(out.hwm, m.hwm) };
  }
  return out;
}

/** Samples VmRSS every 100 ms until stop() is called; stop() returns the largest sample. */
export function sampleRss(pid) {
  let max = memoryOf(pid).rss;
  const timer = setInterval(() => (max = Math.max(max, memoryOf(pid).rss)), 100);
  return () => {
    clearInterval(timer);
    return Math.max(max, memoryOf(pid).rss);
  };
}

/** CPU ticks of the service: its own and its workers'. */
function cpuTicks(pid) {
  return [pid, ...childrenOf(pid)].reduce((sum, p) => sum + cpuTicksOne(p), 0);
}

function cpuTicksOne(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return 0;
  }
}

/**
 * CPU ticks of every PostgreSQL server process on the machine (its command line starts "postgres: ":
 * the backends of every client, the WAL writer, the checkpointer...), per pid: a backend that exits
 * takes its ticks with it, so a meter counts, per pid alive at its end, the ticks since its start
 * (from 0 for a pid started since).
 */
function databaseTicks() {
  const out = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').startsWith('postgres: ')) continue;
    } catch {
      continue;
    }
    out.set(entry, cpuTicksOne(entry));
  }
  return out;
}

/** Busy and total CPU ticks of the whole machine (/proc/stat), and the bytes waiting to be written to disk. */
function machineLoad() {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.reduce((a, b) => a + b, 0);
    const idle = cpu[3] + cpu[4]; // idle + iowait
    const meminfo = readFileSync('/proc/meminfo', 'utf8');
    return { busy: total - idle, total, dirty: kbField(meminfo, 'Dirty') + kbField(meminfo, 'Writeback') };
  } catch {
    return null;
  }
}

/** USER_HZ: the unit of /proc's CPU times (100 on Linux, whatever the kernel's own tick). */
const CLOCK_TICKS = 100;

/**
 * Starts counting CPU time: stop() returns, in milliseconds since the start, the CPU time of the whole
 * machine (every process: the load generator, PostgreSQL's backends, anything else) and of `pid` with
 * its children (the service and its workers), and of the PostgreSQL server's processes (databaseTicks: on
 * SQLite, whatever else the machine's server did meanwhile). Per request answered, the first is what one request
 * costs the machine, the figure a target in req/s on these cores comes down to.
 */
export function cpuMeter(pid) {
  const tickMs = 1000 / CLOCK_TICKS;
  const machine0 = machineLoad();
  const process0 = cpuTicks(pid);
  const database0 = databaseTicks();
  return () => {
    const machine1 = machineLoad();
    let database = 0;
    for (const [p, ticks] of databaseTicks()) database += ticks - (database0.get(p) ?? 0);
    return {
      machineMs: machine0 && machine1 ? (machine1.busy - machine0.busy) * tickMs : undefined,
      processMs: (cpuTicks(pid) - process0) * tickMs,
      databaseMs: database * tickMs,
    };
  };
}

/**
 * Waits until a process has stopped using CPU (a slow peer keeps working through requests queued
 * before the load ended), so its backlog does not steal CPU from the next measurement; then, for at
 * most `machineMs`, until the machine is quiet: under a fifth of one core busy and under 16 MB waiting
 * for the disk. That covers what is not the process: PostgreSQL's autovacuum after the write
 * scenarios, and the disk writes of json-server, which rewrites its whole file per write.
 */
export async function waitIdle(pid, maxMs = 60_000, machineMs = 20_000) {
  const deadline = Date.now() + maxMs;
  let last = cpuTicks(pid);
  while (Date.now() < deadline) {
    await sleep(250);
    const now = cpuTicks(pid);
    if (now - last <= 2) break;
    last = now;
  }
  const until = Date.now() + machineMs;
  let before = machineLoad();
  while (before && Date.now() < until) {
    await sleep(250);
    const now = machineLoad();
    if (!now) return;
    const busyCores = ((now.busy - before.busy) / Math.max(1, now.total - before.total)) * cpus().length;
    if (busyCores < 0.2 && now.dirty < 16 * 1024 * 1024) return;
    before = now;
  }
}
