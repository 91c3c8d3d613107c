// `npm run bench`: the ceiling, the service (SQLite, and PostgreSQL with --postgres) and json-server,
// measured in the same run, alternating per scenario and round. See bench/README.md.
import { mkdirSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseOptions, USAGE } from './lib/options.mjs';
import { ensureTool, runLoad } from './lib/load.mjs';
import { sqliteDataset, postgresDataset, workingCopy, gitDescribe } from './lib/dataset.mjs';
import { startProcess, stopProcess, sampleRss, waitIdle, memoryOf, cpuMeter } from './lib/procs.mjs';
import { startService, createTokens, discoverIds, usersAvailable } from './lib/service.mjs';
import { buildPeerDb, storedCountry } from './lib/peer.mjs';
import { buildScenarios } from './lib/scenarios.mjs';
import { capture } from './lib/capture.mjs';
import { evaluateTargets } from './lib/targets.mjs';
import { writeReports } from './lib/report.mjs';
import { machine } from './lib/machine.mjs';
import { profile } from './lib/profile.mjs';
import { MIX_IDS, MIX_PHASES, advance, newCursor, phaseList, prepareMix, restorePatched } from './lib/mix-run.mjs';
import { WEBHOOK_ID, webhookPhase } from './lib/webhook-run.mjs';
import { WRITES_PHASES, prepareWrites, restoreWrites } from './lib/writes-run.mjs';

const RESULTS = 'bench/results';
const WORK = join(RESULTS, 'work');
const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);

/** Start to ready (spawn -> /ready 200), median of three starts: one start on a busy machine is noise. */
async function medianStart(databaseUrl, workers) {
  const times = [];
  for (let i = 0; i < 3; i++) {
    const p = await startService('service', databaseUrl, [], undefined, workers);
    times.push(p.readyMs);
    await stopProcess(p);
  }
  return times.sort((a, b) => a - b)[1];
}

async function main() {
  const o = parseOptions(process.argv.slice(2));
  if (o.help) return process.stdout.write(USAGE);
  mkdirSync(WORK, { recursive: true });
  const startMachine = machine();
  const tool = ensureTool(o.tool, log);
  const { file: pristine, manifest } = await sqliteDataset(o, RESULTS, log);
  // The part of the catalogue json-server also holds: every side reads the same records.
  const artistsInPeer = Math.min(o.peerArtists, manifest.actual?.artists ?? o.artists);
  if (o.profile) {
    // --profile --postgres URL: the service on that PostgreSQL database (seeded as for the table) instead of SQLite.
    if (o.postgres) await postgresDataset(o, o.postgres, RESULTS, log);
    return profile(o, tool, pristine, WORK, artistsInPeer, log);
  }

  const procs = [];
  const started = (p) => (procs.push(p), p);
  try {
    const svcUrl = `sqlite:${workingCopy(pristine, WORK, 'service.db')}`;
    const readyMs = await medianStart(svcUrl, o.workers);
    // BENCH_SERVICE_IMPORT=./bench/lib/busy-probe.mjs: a preload for the measured service (not the timed starts).
    const serviceFlags = process.env.BENCH_SERVICE_IMPORT ? ['--import', process.env.BENCH_SERVICE_IMPORT] : [];
    const svc = started(await startService('service', svcUrl, serviceFlags, undefined, o.workers));
    log(`service ready in ${svc.readyMs.toFixed(0)} ms at ${svc.base}; median of 3 starts ${readyMs.toFixed(0)} ms`);
    const tokens = await createTokens(svc.base);
    const ids = await discoverIds(svc.base, tokens, artistsInPeer);
    const hasUsers = await usersAvailable(svc.base, tokens);
    const brazil = storedCountry(pristine, 'brazil');
    const scenarios = buildScenarios({ ...ids, tokens, brazil, connections: o.connections });
    const wanted = (id) => !o.only || o.only.includes(id);

    let pg = null;
    if (o.postgres) {
      await postgresDataset(o, o.postgres, RESULTS, log);
      const pgSvc = started(await startService('postgres', o.postgres, [], undefined, o.workers));
      log(`service on PostgreSQL ready in ${pgSvc.readyMs.toFixed(0)} ms`);
      const pgTokens = await createTokens(pgSvc.base);
      const pgIds = await discoverIds(pgSvc.base, pgTokens, artistsInPeer);
      const pgScenarios = buildScenarios({ ...pgIds, tokens: pgTokens, brazil, connections: o.connections });
      pg = { proc: pgSvc, tokens: pgTokens, ids: pgIds, requests: Object.fromEntries(pgScenarios.map((s) => [s.id, s.requests])) };
    }

    // The realistic mix (issue 14): distinct requests, with writes; measured first, reported first.
    const skipped = [];
    const active = [];
    let mixRun = null;
    if (MIX_IDS.some(wanted)) {
      if (!hasUsers) skipped.push({ id: 'mix', reason: 'GET /users is not in this build' });
      else {
        const mixSides = [{ side: 'service', proc: svc, tokens, ids }, ...(pg ? [{ side: 'postgres', proc: pg.proc, tokens: pg.tokens, ids: pg.ids }] : [])];
        mixRun = await prepareMix({ o, pristine, sides: mixSides, waitIdle, log });
        mixRun.requests.ceiling = mixRun.requests.service;
        const file = join(WORK, 'ceiling-mix.json');
        writeFileSync(file, JSON.stringify(mixRun.ceiling));
        const ceiling = started(
          await startProcess({
            name: 'ceiling mix',
            command: process.execPath,
            args: ['bench/lib/ceiling-server.mjs', file],
            env: {},
            readyPath: '/',
            readyStatus: 'any',
          }),
        );
        mixRun.cursors = { ceiling: newCursor(), service: newCursor(), postgres: newCursor() };
        for (const phase of MIX_PHASES.filter((p) => wanted(p.id))) {
          active.push({
            id: phase.id,
            title: `Mix: ${phase.title}`,
            mix: phase,
            connections: phase.connections ?? o.connections,
            ceiling,
            path: `${mixRun.mix.reads.length} distinct requests`,
            peerPath: '',
          });
        }
      }
    }

    let peer = null;
    if (o.peer && scenarios.some((s) => wanted(s.id))) {
      const peerFile = join(RESULTS, `peer-u${o.peerUsers}-a${artistsInPeer}-${manifest.seededAt.replace(/[^0-9]/g, '')}.json`);
      buildPeerDb(pristine, peerFile, { peerUsers: o.peerUsers, peerArtists: artistsInPeer }, log);
      const peerRun = join(WORK, 'peer.json');
      copyFileSync(peerFile, peerRun);
      peer = started(
        await startProcess({
          name: 'json-server',
          command: process.execPath,
          args: ['node_modules/json-server/lib/bin.js', peerRun, '--host', '127.0.0.1'],
          env: {},
          readyPath: `/artists/${ids.artistId}`,
        }),
      );
      log(`json-server ready in ${peer.readyMs.toFixed(0)} ms`);
    }

    // Each scenario's ceiling replays the service's own answer, captured now.
    for (const s of scenarios.filter((sc) => wanted(sc.id))) {
      if (s.users && !hasUsers) {
        skipped.push({ id: s.id, reason: 'GET /users is not in this build' });
        continue;
      }
      const answers = {};
      for (const method of new Set(s.requests.map((r) => r.method))) {
        const r = await capture(
          svc.base,
          s.requests.find((q) => q.method === method),
        );
        if (r.status < 200 || r.status > 299) throw new Error(`${s.id}: the service answered ${r.status}: ${r.text.slice(0, 300)}`);
        answers[method] = r;
      }
      const file = join(WORK, `ceiling-${s.id}.json`);
      writeFileSync(file, JSON.stringify(answers));
      const ceiling = started(
        await startProcess({
          name: `ceiling ${s.id}`,
          command: process.execPath,
          args: ['bench/lib/ceiling-server.mjs', file],
          env: {},
          readyPath: '/',
          readyStatus: 'any',
        }),
      );
      const totalCount = answers.GET?.header('x-total-count');
      active.push({
        ...s,
        ceiling,
        bytes: Buffer.from((answers.GET ?? answers.POST).body, 'base64').length,
        totalCount,
        path: s.requests[0].path,
        peerPath: s.peer[0].path,
      });
    }

    // Writes only (issue 32): measured after the rest of each round; every run's writes are put back
    // (restoreWrites), so the next round's phases read the dataset as seeded.
    let writesRun = null;
    const backends = [{ side: 'service', proc: svc, tokens }, ...(pg ? [{ side: 'postgres', proc: pg.proc, tokens: pg.tokens }] : [])];
    if (WRITES_PHASES.some((p) => wanted(p.id))) {
      if (!hasUsers) skipped.push({ id: 'writes', reason: 'GET /users is not in this build' });
      else {
        writesRun = prepareWrites({ o, pristine, users: manifest.actual?.users ?? o.users, sides: backends });
        for (const phase of WRITES_PHASES.filter((p) => wanted(p.id))) {
          active.push({
            id: phase.id,
            title: phase.title,
            writes: true,
            connections: phase.connections,
            path: 'PATCH /users/{id}, POST /artists',
            peerPath: '',
          });
        }
      }
    }

    const sides = (s) =>
      s.writes
        ? backends.map(({ side, proc }) => ({ side, proc, requests: writesRun.requests[side] }))
        : [
            { side: 'ceiling', proc: s.ceiling, requests: s.requests },
            { side: 'service', proc: svc, requests: s.requests },
            ...(pg ? [{ side: 'postgres', proc: pg.proc, requests: pg.requests[s.id] }] : []),
            ...(peer && s.peer ? [{ side: 'peer', proc: peer, requests: s.peer }] : []),
          ];
    /** After a writes-only run on a side: its users put back, its artists deleted, and the side idle again. */
    const restoreAfterWrites = async (side, proc, sent, connections) => {
      await waitIdle(proc.pid, 60_000, 0);
      const put = await restoreWrites(proc.base, backends.find((b) => b.side === side).tokens, writesRun, sent, connections);
      log(`writes ${side}: put back ${put.users} users, deleted ${put.artists} artists`);
      await waitIdle(proc.pid);
    };
    // A mix run's list starts where that side's last mix run stopped: no read is sent twice (and so
    // answered from the response cache) before the whole list has been used.
    const mixLoad = async (s, side, proc, load) => {
      const m = await runLoad(tool, proc.base, phaseList(mixRun.requests[side], s.mix, mixRun.cursors[side]), load);
      advance(mixRun.cursors[side], s.mix, m.requests + load.connections);
      return m;
    };
    const load1 = (s, side, proc, requests, load) => {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null)
        throw new Error(`${proc.name} has exited (${proc.child.exitCode ?? proc.child.signalCode}):\n${proc.output().slice(-3000)}`);
      return s.mix ? mixLoad(s, side, proc, load) : runLoad(tool, proc.base, requests, load);
    };
    const runs = {};
    for (let round = 1; round <= o.rounds; round++) {
      for (const s of active) {
        for (const { side, proc, requests } of sides(s)) {
          const load = { connections: s.connections, duration: o.duration };
          if (round === 1) {
            const warm = await load1(s, side, proc, requests, { ...load, duration: 1 });
            // Writes are put back once the service is idle (every write answered), then the machine settles once.
            if (s.writes) await restoreAfterWrites(side, proc, warm.requests + load.connections, load.connections);
            else await waitIdle(proc.pid);
          }
          const stopSampling = sampleRss(proc.pid);
          const stopCpu = cpuMeter(proc.pid);
          const m = await load1(s, side, proc, requests, load);
          m.cpu = stopCpu();
          m.peakRss = side === 'ceiling' ? undefined : stopSampling();
          if (side === 'ceiling') stopSampling();
          m.round = round;
          await waitIdle(proc.pid);
          if (s.mix?.write === 'patch') {
            // The PATCHed users get their stored status and age back: later scenarios read the dataset as seeded.
            const cursor = mixRun.cursors[side];
            if (side === 'ceiling') cursor.patchDirtyFrom = null;
            else if (await restorePatched(proc.base, cursor, mixRun.requests[side], mixRun.originals)) await waitIdle(proc.pid);
          }
          if (s.writes) await restoreAfterWrites(side, proc, m.requests + load.connections, load.connections);
          (runs[s.id] ??= {})[side] ??= [];
          runs[s.id][side].push(m);
          log(
            `round ${round} ${s.id.padEnd(16)} ${side.padEnd(8)} ${m.rps.toFixed(0).padStart(7)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms  errors ${m.errors}`,
          );
        }
      }
    }

    // One webhook's deliveries against sustained writes (issue 34): last, so that the songs it writes
    // and the webhook it attaches touch no other measurement.
    const webhook = wanted(WEBHOOK_ID)
      ? await webhookPhase({
          o,
          tool,
          log,
          sides: [{ side: 'service', proc: svc, tokens, ids }, ...(pg ? [{ side: 'postgres', proc: pg.proc, tokens: pg.tokens, ids: pg.ids }] : [])],
        })
      : null;

    // The best round of each side, by req/s: one rule for every side.
    const best = {};
    for (const [id, bySide] of Object.entries(runs)) {
      best[id] = Object.fromEntries(Object.entries(bySide).map(([side, ms]) => [side, ms.reduce((a, b) => (b.rps > a.rps ? b : a))]));
    }
    // VmHWM covers the whole life of the service; the samples taken under load are the fallback if it is gone.
    const sampled = Object.values(runs).flatMap((bySide) => (bySide.service ?? []).map((m) => m.peakRss ?? 0));
    const peakRss = memoryOf(svc.pid).hwm || Math.max(0, ...sampled) || undefined;
    const extra = { readyMs, peakRss, usersIndex: process.env.USERS_INDEX !== 'off', mixLatency: mixRun?.latency, webhook };
    const dataset = { ...manifest.params, ...(manifest.actual ?? {}), method: manifest.method ?? 'seed' };
    const result = {
      when: new Date().toISOString(),
      commit: gitDescribe(),
      quick: o.quick,
      tool,
      rounds: o.rounds,
      duration: o.duration,
      machine: startMachine,
      loadAverageAtEnd: machine().loadAverage,
      dataset,
      peerData: { users: Math.min(o.peerUsers, dataset.users), artists: artistsInPeer },
      postgres: !!pg,
      workers: o.workers,
      readyMs,
      pgReadyMs: pg?.proc.readyMs,
      peakRss,
      scenarios: active.map(({ id, title, connections, bytes, totalCount, path, peerPath, mix, writes }) => ({
        id,
        title,
        connections,
        bytes,
        totalCount,
        path,
        peerPath,
        mix: !!mix,
        writes: !!writes,
      })),
      mix: mixRun ? { ...mixRun.summary, latency: mixRun.latency } : null,
      webhook,
      skipped,
      best,
      runs,
      targets: evaluateTargets(best, extra),
    };
    const { text } = writeReports(RESULTS, result, o.record);
    process.stdout.write(`\n${text}\n\nTargets:\n${result.targets.map((t) => `  [${t.status}] ${t.target}: ${t.measured ?? '-'}`).join('\n')}\n`);
    if (skipped.length) process.stdout.write(`\nNot measured: ${skipped.map((s) => `${s.id} (${s.reason})`).join(', ')}\n`);
    process.stdout.write(`\nWritten: ${RESULTS}/latest.md, latest.json, latest.svg\n`);
  } finally {
    for (const p of procs.reverse()) await stopProcess(p);
  }
}

main().catch((err) => {
  process.stderr.write(`[bench] failed: ${err.stack ?? err}\n`);
  process.exit(1);
});
