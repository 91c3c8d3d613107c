// The results table (terminal and Markdown), latest.json, and the Markdown report.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, MB } from './targets.mjs';
import { chartSvg } from './chart.mjs';

const SIDES = ['ceiling', 'service', 'postgres', 'peer'];

export function tableRows(scenarios, best) {
  const rows = [];
  for (const s of scenarios) {
    for (const side of SIDES) {
      const m = best[s.id]?.[side];
      if (!m) continue;
      const ofCeiling = best[s.id].ceiling && side !== 'ceiling' ? `${fmt((m.rps / best[s.id].ceiling.rps) * 100, 1)}%` : '';
      rows.push([s.title, side, String(s.connections), fmt(m.rps), fmt(m.p50, 2), fmt(m.p99, 2), fmt(m.errors), m.peakRss ? fmt(m.peakRss / MB, 1) : '', ofCeiling]);
    }
  }
  return rows;
}

const HEAD = ['scenario', 'side', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'peak RSS MB', 'of ceiling'];

export function textTable(rows) {
  const all = [HEAD, ...rows];
  const widths = HEAD.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all.map((r) => r.map((c, i) => (i <= 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
}

export function markdownTable(head, rows) {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

export function writeReports(dir, result, record = false) {
  const rows = tableRows(result.scenarios, result.best);
  const targets = markdownTable(['target', 'measured', 'status'], result.targets.map((t) => [t.target, t.measured ?? '-', t.status]));
  const skipped = result.skipped.map((s) => `- ${s.id}: ${s.reason}`).join('\n');
  const provisional =
    result.dataset.method === 'api'
      ? '\n**Provisional:** `music-catalogue seed` was not in this build, so the catalogue was created through the HTTP API (a small one) and there are no users; the figures are not the issue\'s dataset.\n'
      : '';
  const md = `# Benchmark results
${provisional}
${result.when}, commit ${result.commit}, ${result.quick ? 'quick run' : 'full run'}.

Machine: ${result.machine.cpus} x ${result.machine.cpu}, ${result.machine.memoryGiB} GiB memory, ${result.machine.os}, Node ${result.machine.node}, load generator ${result.tool}. Load average at the start: ${result.machine.loadAverage.join(' / ')}, at the end: ${result.loadAverageAtEnd.join(' / ')} (1 / 5 / 15 min).

Dataset: ${fmt(result.dataset.users)} users; ${fmt(result.dataset.artists)} artists x ${result.dataset.albumsPerArtist} albums x ${result.dataset.songsPerAlbum} songs (seed ${result.dataset.seed}, ${result.dataset.method}). json-server: ${fmt(result.peerData.users)} users, ${fmt(result.peerData.artists)} artists' catalogue.
Each figure is the best of ${result.rounds} round(s) of ${result.duration} s (ceiling, service, ${result.postgres ? 'PostgreSQL, ' : ''}peer alternating), wrk -t1 (-c as shown); errors are non-2xx answers plus socket errors.
Start to ready (spawn -> /ready 200, median of 3 starts on the seeded file): ${fmt(result.readyMs)} ms${result.pgReadyMs ? `, on PostgreSQL ${fmt(result.pgReadyMs)} ms` : ''}. Service peak RSS over the run (VmHWM): ${fmt(result.peakRss / MB, 1)} MB.

## Targets

${targets}

## All measurements

${markdownTable(HEAD, rows)}
${skipped ? `\nNot measured:\n${skipped}\n` : ''}
![service vs ceiling vs peer](latest.svg)
`;
  writeFileSync(join(dir, 'latest.md'), md);
  if (record) {
    const committed = md
      .replace('# Benchmark results', '# Benchmark results (committed)\n\nWritten by `npm run bench -- --record`; how the benchmark works: [README.md](README.md).')
      .replace('](latest.svg)', '](RESULTS.svg)');
    writeFileSync(join(dir, '..', 'RESULTS.md'), committed);
    writeFileSync(join(dir, '..', 'RESULTS.svg'), chartSvg(result.scenarios, result.best));
  }
  writeFileSync(join(dir, 'latest.json'), JSON.stringify(result, null, 2));
  writeFileSync(join(dir, 'latest.svg'), chartSvg(result.scenarios, result.best));
  return { md, text: textTable(rows) };
}
