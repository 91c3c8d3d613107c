// The targets of issue 7, each judged met / not met from the measured figures (never a unit test).

const MB = 1024 * 1024;
const fmt = (n, d = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));

/** best[scenarioId][target] = measurement; extra = { readyMs, peakRss, pgReadyMs } */
export function evaluateTargets(best, extra) {
  const svc = (id) => best[id]?.service;
  const out = [];
  const add = (target, measured, met) => out.push({ target, measured, status: measured === undefined ? 'not measured' : met ? 'met' : 'NOT met' });

  for (const [id, label] of [['get-artist', 'GET an artist'], ['get-songs', 'GET the songs of an album']]) {
    const s = svc(id);
    const c = best[id]?.ceiling;
    const ratio = s && c ? s.rps / c.rps : undefined;
    add(`${label}: >= 70% of the ceiling's req/s`, ratio === undefined ? undefined : `${fmt(ratio * 100, 1)}% (${fmt(s.rps)} of ${fmt(c.rps)} req/s)`, ratio >= 0.7);
  }
  const list = svc('users-p50');
  add('Users list (page 50): >= 10,000 req/s', list && `${fmt(list.rps)} req/s`, list?.rps >= 10_000);
  add('Users list (page 50): p99 < 10 ms', list && `${fmt(list.p99, 2)} ms`, list?.p99 < 10);
  const deep = svc('users-p4000-c1');
  add('Users list page 4000: p50 < 5 ms at 1 connection', deep && `${fmt(deep.p50, 2)} ms`, deep?.p50 < 5);
  const post = svc('post-song');
  add('POST a song: >= 5,000 acknowledged writes/s at 32 connections', post && `${fmt(post.rps)} writes/s (${fmt(post.errors)} errors)`, post?.rps >= 5000 && post.errors === 0);
  add('Peak RSS < 150 MB through the whole run', extra.peakRss ? `${fmt(extra.peakRss / MB, 1)} MB` : undefined, extra.peakRss < 150 * MB);
  add('Start to ready < 1 s', extra.readyMs !== undefined ? `${fmt(extra.readyMs)} ms` : undefined, extra.readyMs < 1000);

  const reads = ['get-artist', 'get-songs', 'users-p50', 'users-p4000', 'young-brazilians'];
  const ratios = reads.filter((id) => best[id]?.postgres && svc(id)).map((id) => ({ id, ratio: best[id].postgres.rps / svc(id).rps }));
  const worst = ratios.sort((a, b) => a.ratio - b.ratio)[0];
  add('PostgreSQL reads >= half the SQLite req/s', worst && `lowest ${worst.id}: ${fmt(worst.ratio * 100, 1)}% of SQLite`, worst?.ratio >= 0.5);
  return out;
}

export { fmt, MB };
