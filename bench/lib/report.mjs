// The results table (terminal and Markdown), latest.json, and the Markdown report.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, percent, MB, MIX_TARGET_SHARES } from './targets.mjs';
import { chartSvg } from './chart.mjs';
import { MIX_KINDS } from './mix.mjs';
import { WRITES_USER_POOL } from './writes.mjs';

const SIDES = ['ceiling', 'service', 'postgres', 'peer'];

export function tableRows(scenarios, best) {
  const rows = [];
  for (const s of scenarios) {
    for (const side of SIDES) {
      const m = best[s.id]?.[side];
      if (!m) continue;
      const ofCeiling = best[s.id].ceiling && side !== 'ceiling' ? `${fmt((m.rps / best[s.id].ceiling.rps) * 100, 1)}%` : '';
      rows.push([
        s.title,
        side,
        String(s.connections),
        fmt(m.rps),
        fmt(m.p50, 2),
        fmt(m.p99, 2),
        fmt(m.errors),
        m.peakRss ? fmt(m.peakRss / MB, 1) : '',
        ofCeiling,
      ]);
    }
  }
  return rows;
}

const HEAD = ['scenario', 'side', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'peak RSS MiB', 'of ceiling'];

export function textTable(rows, head = HEAD, left = 2) {
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all.map((r) => r.map((c, i) => (i < left ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
}

const MIX_HEAD = [
  'phase',
  'side',
  'conns',
  'req/s',
  'p50 ms',
  'p99 ms',
  'non-2xx',
  'socket errors',
  'peak RSS MiB',
  'machine CPU us/req',
  'process CPU us/req',
  'PostgreSQL CPU us/req',
  'of ceiling',
  'PostgreSQL / SQLite',
];

/** CPU time per request answered, in microseconds, of the whole machine or of the measured process tree. */
const perRequest = (m, key) => (m.cpu?.[key] !== undefined && m.requests ? fmt((m.cpu[key] * 1000) / m.requests) : '');

/** The realistic mix: one row per phase and side, with its share of the ceiling and PostgreSQL's share of SQLite. */
export function mixRows(scenarios, best) {
  const rows = [];
  for (const s of scenarios.filter((sc) => sc.mix)) {
    const b = best[s.id] ?? {};
    for (const side of SIDES) {
      const m = b[side];
      if (!m) continue;
      const ofCeiling = b.ceiling && side !== 'ceiling' ? percent(m.rps / b.ceiling.rps) : '';
      const pgRatio = side === 'postgres' && b.service ? percent(m.rps / b.service.rps) : '';
      rows.push([
        s.title.replace(/^Mix: /, ''),
        side,
        String(s.connections),
        fmt(m.rps),
        fmt(m.p50, 2),
        fmt(m.p99, 2),
        fmt(m.non2xx ?? 0),
        fmt(m.socketErrors ?? 0),
        m.peakRss ? fmt(m.peakRss / MB, 1) : '',
        perRequest(m, 'machineMs'),
        perRequest(m, 'processMs'),
        side === 'postgres' ? perRequest(m, 'databaseMs') : '',
        ofCeiling,
        pgRatio,
      ]);
    }
  }
  return rows;
}

/**
 * What a target in req/s means in CPU: on `cores` cores, a share of the ceiling's req/s leaves each
 * request at most cores / (share x ceiling req/s) of machine CPU (load generator included, as it is in
 * every side's figure). One line per phase with a target, against what each backend used.
 */
export function mixBudgetLines(scenarios, best, cores) {
  const lines = [];
  for (const s of scenarios.filter((sc) => MIX_TARGET_SHARES[sc.id])) {
    const b = best[s.id] ?? {};
    if (!b.ceiling || !b.service?.cpu?.machineMs) continue;
    const share = MIX_TARGET_SHARES[s.id];
    const budget = (cores * 1e6) / (share * b.ceiling.rps);
    const used = (m) => (m.cpu.machineMs * 1000) / m.requests;
    const pg = b.postgres?.cpu?.machineMs ? `, PostgreSQL ${fmt(used(b.postgres))} us (${fmt(used(b.postgres) / budget, 1)}x)` : '';
    lines.push(
      `- ${s.title.replace(/^Mix: /, '')}: ${share * 100}% of ${fmt(b.ceiling.rps)} req/s on ${cores} cores leaves ${fmt(budget)} us of machine CPU per request; SQLite used ${fmt(used(b.service))} us (${fmt(used(b.service) / budget, 1)}x)${pg}.`,
    );
  }
  return lines;
}

const WRITES_HEAD = [
  'phase',
  'side',
  'conns',
  'writes/s',
  'p50 ms',
  'p99 ms',
  'non-2xx',
  'socket errors',
  'machine CPU us/write',
  'process CPU us/write',
  'PostgreSQL CPU us/write',
  'of 1 connection',
  'PostgreSQL / SQLite',
];

/** Writes only (issue 32): one row per connection count and backend, with the rate against that backend's at 1 connection. */
export function writesRows(scenarios, best) {
  const rows = [];
  const one = best[scenarios.find((s) => s.writes && s.connections === 1)?.id] ?? {};
  for (const s of scenarios.filter((sc) => sc.writes)) {
    const b = best[s.id] ?? {};
    for (const side of ['service', 'postgres']) {
      const m = b[side];
      if (!m) continue;
      rows.push([
        s.title,
        side === 'service' ? 'SQLite' : 'PostgreSQL',
        String(s.connections),
        fmt(m.rps),
        fmt(m.p50, 2),
        fmt(m.p99, 2),
        fmt(m.non2xx ?? 0),
        fmt(m.socketErrors ?? 0),
        perRequest(m, 'machineMs'),
        perRequest(m, 'processMs'),
        side === 'postgres' ? perRequest(m, 'databaseMs') : '',
        one[side] ? `${fmt(m.rps / one[side].rps, 2)}x` : '',
        side === 'postgres' && b.service ? percent(m.rps / b.service.rps) : '',
      ]);
    }
  }
  return rows;
}

function writesSection(result) {
  const rows = writesRows(result.scenarios, result.best);
  if (!rows.length) return '';
  return `## Writes only

No reads: wrk sends only writes, alternating a PATCH of the status and age of one of ${fmt(WRITES_USER_POOL)} users drawn at random from the dataset and a POST of an artist (every body distinct), at each connection count, on each backend (the service with the same workers). After each run the users get their seeded status and age back and the artists are deleted. The process CPU is the service's (with its workers), not PostgreSQL's backends': those are in the PostgreSQL CPU column (every process of the machine's PostgreSQL server).

${markdownTable(WRITES_HEAD, rows)}
`;
}

const LATENCY_HEAD = ['request kind', 'backend', 'URLs', 'p50 ms', 'p99 ms', 'max ms', 'slowest'];

export function latencyRows(latency = {}, md = false) {
  const rows = [];
  for (const { kind, title } of MIX_KINDS) {
    for (const [side, stats] of Object.entries(latency)) {
      const s = stats[kind];
      if (s)
        rows.push([
          title,
          side === 'service' ? 'SQLite' : 'PostgreSQL',
          fmt(s.n),
          fmt(s.p50, 2),
          fmt(s.p99, 2),
          fmt(s.max, 2),
          md ? `\`${s.slowest}\`` : s.slowest,
        ]);
    }
  }
  return rows;
}

function mixIntro(result) {
  const m = result.mix;
  if (!m) return '';
  const kinds = MIX_KINDS.map((k) => `${k.title} ${fmt(m.kinds[k.kind] ?? 0)}`).join(', ');
  return `${fmt(m.reads)} distinct reads drawn by \`bench/lib/mix.mjs\` (seed ${m.seed}): ${kinds}. Users lists combine status / older_than / younger_than / lives_in (one country or a list of three) with one- or two-field sorts (\`sort=f:dir,g:dir\` or \`sort_by=&order=\`), pages mostly 1-5 and sometimes up to 500, sizes 10-100. Each run continues the list where the last run on that side stopped, so no read repeats before all ${fmt(m.reads)} were sent. The write phases put one write in every 20 requests: a song POST to the album no read asks for, or a PATCH of the status and/or age of one of ${fmt(m.patchedUsers)} users (put back after each PATCH run). The ceiling answers the mix's real answers (captured from the service, in the mix's proportions of kinds) whatever the URL. First requests: ${m.examples.map((e) => `\`${e}\``).join(', ')}.`;
}

const WEBHOOK_HEAD = [
  'backend',
  'webhook',
  'writes/s',
  'of no webhook',
  'delivered/s',
  'delivered / written',
  'backlog at end',
  'rest arrived in',
  'events per POST',
  'receiver CPU (cores)',
];

/**
 * The webhook phase (issue 34): per backend, writes with no webhook (before and after the others: the
 * drift between them is the machine's), then deliveries at each batch size against the writes.
 */
export function webhookRows(webhook) {
  const rows = [];
  for (const [side, runs] of Object.entries(webhook?.sides ?? {})) {
    const backend = side === 'service' ? 'SQLite' : 'PostgreSQL';
    const plain = runs.filter((r) => r.batch === null);
    const plainRps = plain.length ? plain.reduce((sum, r) => sum + r.writes.rps, 0) / plain.length : undefined;
    for (const r of runs) {
      if (r.batch === null) {
        rows.push([backend, `none${r.when ? ` (${r.when})` : ''}`, fmt(r.writes.rps), '', '', '', '', '', '', '']);
        continue;
      }
      rows.push([
        backend,
        `batch_size ${r.batch}`,
        fmt(r.writes.rps),
        plainRps ? percent(r.writes.rps / plainRps) : '',
        fmt(r.deliveredPerSecond),
        r.written ? percent(r.delivered / r.written) : '-',
        fmt(r.backlogAtEnd),
        r.drainedMs === undefined ? 'not within 30 s' : `${fmt(r.drainedMs)} ms`,
        fmt(r.eventsPerPost, 1),
        fmt(r.receiverCores, 2),
      ]);
    }
  }
  return rows;
}

function webhookSection(result) {
  const rows = webhookRows(result.webhook);
  if (!rows.length) return '';
  return `## One webhook against sustained writes

Song POSTs at ${result.webhook.connections} connections for ${result.webhook.duration} s per run, on each backend four times in a row: with no webhook, with one webhook on \`song.created\` at a large batch size and at batch_size 1, and with no webhook again (\`of no webhook\`: against the mean of the two), to a receiver on the same machine that verifies every signature (\`bench/lib/webhook-receiver.mjs\`). Delivered: the distinct events the receiver had by the end of the load, against the song POSTs acknowledged in it; the rest arrived after it in the time shown (at most 30 s is waited for). The machine's cores are shared by wrk, the service, the receiver (its CPU during the load is shown: a receiver elsewhere would leave that to the service) and PostgreSQL: compare the figures of one backend with each other.

${markdownTable(WEBHOOK_HEAD, rows)}
`;
}

export function markdownTable(head, rows) {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function budgetText(result) {
  const lines = mixBudgetLines(result.scenarios, result.best, result.machine.cpus);
  if (!lines.length) return '';
  return `
CPU per request: the machine's busy time (every process, wrk and PostgreSQL included), the measured process's own (the service with its workers, or the ceiling) and, on PostgreSQL, the database server's (every process of the machine's PostgreSQL server: the service's backends, the WAL writer, the checkpointer), over the requests answered in the run. What each target leaves a request, against what it used:

${lines.join('\n')}
`;
}

export function writeReports(dir, result, record = false) {
  const single = result.scenarios.filter((s) => !s.mix && !s.writes);
  const rows = tableRows(single, result.best);
  const mixed = mixRows(result.scenarios, result.best);
  const latency = latencyRows(result.mix?.latency);
  const mixSection = result.mix
    ? `## Distinct requests, with writes (the realistic mix)

${mixIntro(result)}

${mixed.length ? markdownTable(MIX_HEAD, mixed) : '(no load phase of the mix was run)'}
${budgetText(result)}

### One request at a time, uncached

Each URL below is requested once, in turn across the kinds, over one keep-alive connection, after 400 other distinct reads that warm the workers; none of them is part of the load phases or of the warming reads, so no answer comes from the response cache.

${markdownTable(LATENCY_HEAD, latencyRows(result.mix.latency, true))}
`
    : '';
  const targets = markdownTable(
    ['target', 'measured', 'status'],
    result.targets.map((t) => [t.target, t.measured ?? '-', t.status]),
  );
  const skipped = result.skipped.map((s) => `- ${s.id}: ${s.reason}`).join('\n');
  const provisional =
    result.dataset.method === 'api'
      ? "\n**Provisional:** `music-catalogue seed` was not in this build, so the catalogue was created through the HTTP API (a small one) and there are no users; the figures are not the issue's dataset.\n"
      : '';
  const md = `# Benchmark results
${provisional}
${result.when}, commit ${result.commit}, ${result.quick ? 'quick run' : 'full run'}.

Machine: ${result.machine.cpus} x ${result.machine.cpu}, ${result.machine.memoryGiB} GiB memory, ${result.machine.os}, Node ${result.machine.node}, load generator ${result.tool}. Service: WORKERS=${result.workers ?? 1}. Load average at the start: ${result.machine.loadAverage.join(' / ')}, at the end: ${result.loadAverageAtEnd.join(' / ')} (1 / 5 / 15 min).

Dataset: ${fmt(result.dataset.users)} users; ${fmt(result.dataset.artists)} artists x ${result.dataset.albumsPerArtist} albums x ${result.dataset.songsPerAlbum} songs (seed ${result.dataset.seed}, ${result.dataset.method}). json-server: ${fmt(result.peerData.users)} users, ${fmt(result.peerData.artists)} artists' catalogue.
Each figure is the best of ${result.rounds} round(s) of ${result.duration} s (ceiling, service, ${result.postgres ? 'PostgreSQL, ' : ''}peer alternating), wrk -t1 (-c as shown); errors are non-2xx answers plus socket errors.
Start to ready (spawn -> /ready 200, median of 3 starts on the seeded file): ${fmt(result.readyMs)} ms${result.pgReadyMs ? `, on PostgreSQL ${fmt(result.pgReadyMs)} ms` : ''}. Service peak RSS over the run (VmHWM of its largest process): ${fmt(result.peakRss / MB, 1)} MiB (${fmt(result.peakRss / 1e6, 1)} MB).

${mixSection}
${writesSection(result)}
${webhookSection(result)}
## One URL repeated; answered from the response cache

Each of these scenarios sends the same request (or, for the 90/10 mix, the same 20) over and over: after the first, the service answers from its response cache. They measure the fast path, not a real workload (see the mix above).

${rows.length ? markdownTable(HEAD, rows) : '(not run)'}
${skipped ? `\nNot measured:\n${skipped}\n` : ''}
## Targets

${targets}

![service vs ceiling vs peer](latest.svg)
`;
  writeFileSync(join(dir, 'latest.md'), md);
  if (record) {
    const committed = md
      .replace(
        '# Benchmark results',
        '# Benchmark results (committed)\n\nWritten by `npm run bench -- --record`; how the benchmark works: [README.md](README.md).',
      )
      .replace('](latest.svg)', '](RESULTS.svg)');
    writeFileSync(join(dir, '..', 'RESULTS.md'), committed);
    writeFileSync(join(dir, '..', 'RESULTS.svg'), chartSvg(result.scenarios, result.best));
  }
  writeFileSync(join(dir, 'latest.json'), JSON.stringify(result, null, 2));
  writeFileSync(join(dir, 'latest.svg'), chartSvg(result.scenarios, result.best));
  const text = [
    ...(result.mix
      ? [
          'Distinct requests, with writes (the realistic mix):',
          mixed.length ? textTable(mixed, MIX_HEAD) : '(no load phase run)',
          ...mixBudgetLines(result.scenarios, result.best, result.machine.cpus),
          '',
          'One request at a time, uncached:',
          textTable(latency, LATENCY_HEAD),
          '',
        ]
      : []),
    ...(writesRows(result.scenarios, result.best).length
      ? ['Writes only (no reads):', textTable(writesRows(result.scenarios, result.best), WRITES_HEAD), '']
      : []),
    ...(rows.length ? ['One URL repeated; answered from the response cache:', textTable(rows)] : []),
    ...(result.webhook ? ['One webhook against sustained song POSTs:', textTable(webhookRows(result.webhook), WEBHOOK_HEAD)] : []),
  ].join('\n');
  return { md, text };
}
