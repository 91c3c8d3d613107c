// A preload for the service's workers (`node --import ./bench/lib/busy-probe.mjs`; bench/run.mjs passes
// BENCH_SERVICE_IMPORT on): how long each worker's event loop was held up, and how long its calls that
// take SQLite's write lock took on the wall clock against the CPU they used. The difference is time
// the call spent asleep (busy_timeout waiting for another connection's write transaction), on the
// event loop. One line a second per worker in /tmp/busy-probe/<primary pid>-<worker pid>.jsonl.
// Measures only: it changes nothing the service does.
import cluster from 'node:cluster';
import http from 'node:http';
import { EventEmitter } from 'node:events';
import { appendFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

if (cluster.isWorker) {
  const dir = '/tmp/busy-probe';
  mkdirSync(dir, { recursive: true });
  const file = `${dir}/${process.ppid}-${process.pid}.jsonl`;
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();

  let requests = {};
  const emit = EventEmitter.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request') requests[args[0].method] = (requests[args[0].method] ?? 0) + 1;
    return emit.call(this, event, ...args);
  };

  const fresh = () => ({ n: 0, wallMs: 0, cpuMs: 0, sleptMs: 0, maxWallMs: 0, over1ms: 0 });
  let calls = fresh();
  const timed = (fn) =>
    function (...args) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      try {
        return fn.apply(this, args);
      } finally {
        const wall = performance.now() - t0;
        const c = process.cpuUsage(c0);
        const cpu = (c.user + c.system) / 1000;
        calls.n++;
        calls.wallMs += wall;
        calls.cpuMs += cpu;
        calls.sleptMs += Math.max(0, wall - cpu);
        calls.maxWallMs = Math.max(calls.maxWallMs, wall);
        if (wall - cpu > 1) calls.over1ms++;
      }
    };

  const SQLite = createRequire(import.meta.url)('better-sqlite3');
  // A call that takes the write lock: a write outside a transaction, or a BEGIN (better-sqlite3's
  // transaction functions run theirs through the same Statement class).
  const probe = new SQLite(':memory:');
  const Statement = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  const kinds = new WeakMap();
  const kind = (stmt) => {
    let k = kinds.get(stmt);
    if (k === undefined) kinds.set(stmt, (k = /^\s*begin/i.test(stmt.source) ? 'begin' : /^\s*pragma/i.test(stmt.source) ? 'pragma' : 'other'));
    return k;
  };
  for (const method of ['run', 'get', 'all']) {
    const original = Statement[method];
    const withTime = timed(original);
    Statement[method] = function (...args) {
      const k = kind(this);
      const takesLock = k === 'begin' || (k === 'other' && !this.readonly && !this.database.inTransaction);
      return (takesLock ? withTime : original).apply(this, args);
    };
  }
  const timer = setInterval(() => {
    const ms = (ns) => Math.round(ns / 1e4) / 100;
    const line = {
      t: Date.now(),
      requests,
      delay: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max), mean: ms(delay.mean) },
      lock: {
        ...calls,
        wallMs: +calls.wallMs.toFixed(2),
        cpuMs: +calls.cpuMs.toFixed(2),
        sleptMs: +calls.sleptMs.toFixed(2),
        maxWallMs: +calls.maxWallMs.toFixed(2),
      },
    };
    appendFileSync(file, JSON.stringify(line) + '\n');
    requests = {};
    calls = fresh();
    delay.reset();
  }, 1000);
  timer.unref();
}
