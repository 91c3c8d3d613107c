// The webhook phase (issue 34): how fast one webhook's deliveries go against the service's sustained
// write rate. Per backend, song POSTs at full load (wrk, --connections, --duration) four times: with
// no webhook, with one webhook on song.created at WEBHOOK_BATCH (whatever waits, up to that many per
// POST) and at batch_size 1 (one event per POST), and with no webhook again (the drift between the
// two is the machine's, shared with other work). A receiver process that verifies every
// signature counts the events it is given; the figures are the events delivered by the end of the
// load against the events written in it, and how long the rest took to arrive after it.
import { performance } from 'node:perf_hooks';
import { runLoad } from './load.mjs';
import { json } from './capture.mjs';
import { cpuMeter, startProcess, stopProcess, waitIdle } from './procs.mjs';

export const WEBHOOK_ID = 'webhook';
export const WEBHOOK_BATCH = 100;
const SECRET = 'bench-webhook-secret-0123456789';
const PATH = '/bench-hook';
/** How long the rest of the events may take to arrive after the load before the run says "not drained". */
const DRAIN_MS = 30_000;
const SONG_BODY = JSON.stringify({ name: 'Webhook benchmark song', time: '03:25' });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(base, request, expected) {
  const res = await json(base, request);
  if (res.status !== expected) throw new Error(`${request.method} ${request.path} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res.json;
}

/** Webhooks a previous run may have left (a run stopped half-way): they would slow this one's writes. */
async function removeBenchHooks(base, admin) {
  for (const hook of await call(base, { method: 'GET', path: '/webhooks', headers: { Authorization: admin.Authorization } }, 200)) {
    if (new URL(hook.url).pathname === PATH)
      await call(base, { method: 'DELETE', path: `/webhooks/${hook.id}`, headers: { Authorization: admin.Authorization } }, 204);
  }
}

/** The events written in a load (acknowledged song POSTs) and delivered by its end, and how the rest arrived. */
async function measured(writes, receiver, receiverCpu) {
  const stats = () => call(receiver.base, { method: 'GET', path: '/stats' }, 200);
  const atEnd = await stats();
  const written = writes.requests - writes.non2xx;
  const seconds = writes.requests / writes.rps;
  // The receiver shares the machine's cores: what it used during the load is taken from the service.
  const receiverCores = receiverCpu().processMs / 1000 / seconds;
  const stopped = performance.now();
  let last = atEnd;
  while (last.events < written && performance.now() - stopped < DRAIN_MS) {
    await sleep(50);
    last = await stats();
  }
  return {
    writes: { rps: writes.rps, requests: writes.requests, errors: writes.errors, p50: writes.p50, p99: writes.p99 },
    written,
    delivered: atEnd.events,
    deliveredPerSecond: atEnd.events / seconds,
    backlogAtEnd: Math.max(0, written - atEnd.events),
    drainedMs: last.events >= written ? Math.max(0, performance.now() - stopped) : undefined,
    posts: last.posts,
    eventsPerPost: last.posts ? last.events / last.posts : 0,
    badSignatures: last.badSignatures,
    resent: last.resent,
    receiverCores,
  };
}

/** sides: [{ side, proc, tokens, ids }]; returns { connections, duration, sides: { [side]: [{ batch, ... }] } }, batch null for no webhook. */
export async function webhookPhase({ o, tool, sides, log }) {
  const receiver = await startProcess({
    name: 'webhook receiver',
    command: process.execPath,
    args: ['bench/lib/webhook-receiver.mjs', SECRET],
    env: {},
    readyPath: '/stats',
  });
  try {
    const out = {};
    for (const { side, proc, tokens, ids } of sides) {
      const admin = { Authorization: `Bearer ${tokens.admin}`, 'Content-Type': 'application/json' };
      await removeBenchHooks(proc.base, admin);
      const post = [
        {
          method: 'POST',
          path: `/artists/${ids.writeArtistId}/albums/${ids.writeAlbumId}/songs`,
          headers: { Authorization: `Bearer ${tokens.write}`, 'Content-Type': 'application/json' },
          body: SONG_BODY,
        },
      ];
      const load = { connections: o.connections, duration: o.duration };
      await runLoad(tool, proc.base, post, { ...load, duration: 1 });
      await waitIdle(proc.pid);
      const runs = [];
      const plain = async (when) => {
        const m = await runLoad(tool, proc.base, post, load);
        runs.push({ batch: null, when, writes: { rps: m.rps, requests: m.requests, errors: m.errors, p50: m.p50, p99: m.p99 } });
        log(`webhook ${side.padEnd(8)} no webhook   ${m.rps.toFixed(0).padStart(7)} writes/s (${when})`);
        await waitIdle(proc.pid);
      };
      await plain('before');
      for (const batch of [WEBHOOK_BATCH, 1]) {
        const hook = await call(
          proc.base,
          {
            method: 'POST',
            path: '/webhooks',
            headers: admin,
            body: JSON.stringify({ url: `${receiver.base}${PATH}`, types: ['song.created'], secret: SECRET, batch_size: batch }),
          },
          201,
        );
        await call(receiver.base, { method: 'POST', path: '/reset' }, 204);
        const receiverCpu = cpuMeter(receiver.pid);
        const writes = await runLoad(tool, proc.base, post, load);
        const run = { batch, ...(await measured(writes, receiver, receiverCpu)) };
        runs.push(run);
        log(
          `webhook ${side.padEnd(8)} batch ${String(batch).padEnd(6)} ${writes.rps.toFixed(0).padStart(7)} writes/s  ${run.deliveredPerSecond.toFixed(0).padStart(7)} delivered/s  backlog ${run.backlogAtEnd}  drained ${run.drainedMs === undefined ? 'no' : `${run.drainedMs.toFixed(0)} ms`}`,
        );
        await call(proc.base, { method: 'DELETE', path: `/webhooks/${hook.id}`, headers: { Authorization: admin.Authorization } }, 204);
        // Its sender stops at its next record; idle, nothing of it reaches the next run's count.
        await waitIdle(proc.pid);
      }
      await plain('after');
      out[side] = runs;
    }
    return { connections: o.connections, duration: o.duration, sides: out };
  } finally {
    await stopProcess(receiver);
  }
}
