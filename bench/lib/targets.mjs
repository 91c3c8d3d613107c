// The targets of issues 7 and 14, each judged met / not met from the measured figures (never a unit test).

/** A MiB: the unit of the RSS figures (VmHWM, VmRSS). */
const MB = 1024 * 1024;
/** A share as a percentage, with two decimals below 1% (0.02% of the ceiling is not "0.0%"). */
const percent = (ratio) => `${fmt(ratio * 100, ratio < 0.01 ? 2 : 1)}%`;
const fmt = (n, d = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));

/** The share of the ceiling's req/s each phase of the realistic mix is held to (issue 14). */
export const MIX_TARGET_SHARES = { 'mix-read': 0.25, 'mix-song': 0.2, 'mix-patch': 0.15 };

/** The targets of issue 14 on the realistic mix (distinct requests, with writes). */
function mixTargets(best, extra, add) {
  const ofCeiling = (id, side = 'service') => {
    const m = best[id]?.[side];
    const c = best[id]?.ceiling;
    return m && c ? { m, ratio: m.rps / c.rps } : undefined;
  };
  const pct = (r) => `${percent(r.ratio)} (${fmt(r.m.rps)} of ${fmt(r.m.rps / r.ratio)} req/s)`;
  const read = ofCeiling('mix-read');
  add("Mix, reads only: >= 25% of the ceiling's req/s", read && pct(read), read?.ratio >= MIX_TARGET_SHARES['mix-read']);
  add('Mix, reads only: p99 < 50 ms', read && `${fmt(read.m.p99, 2)} ms`, read?.m.p99 < 50);
  for (const [id, label, share] of [
    ['mix-song', 'song POSTs', MIX_TARGET_SHARES['mix-song']],
    ['mix-patch', 'user PATCHes', MIX_TARGET_SHARES['mix-patch']],
  ]) {
    const r = ofCeiling(id);
    add(`Mix with ${label}: >= ${share * 100}% of the ceiling's req/s`, r && pct(r), r?.ratio >= share);
    add(`Mix with ${label}: p99 < 100 ms, 0 errors`, r && `${fmt(r.m.p99, 2)} ms, ${fmt(r.m.errors)} errors`, r?.m.p99 < 100 && r.m.errors === 0);
  }
  // Users lists, aliases included (an alias is a users list), one at a time, each URL once.
  const lists = Object.entries(extra.mixLatency ?? {}).flatMap(([side, stats]) =>
    ['users-list', 'alias'].filter((k) => stats[k]).map((k) => ({ side: side === 'service' ? 'SQLite' : 'PostgreSQL', kind: k, ...stats[k] })),
  );
  const worstP50 = lists.reduce((a, b) => (!a || b.p50 > a.p50 ? b : a), undefined);
  const worstMax = lists.reduce((a, b) => (!a || b.max > a.max ? b : a), undefined);
  add(
    'Mix, any single users-list request uncached: p50 < 3 ms',
    worstP50 && `highest ${worstP50.kind} on ${worstP50.side}: ${fmt(worstP50.p50, 2)} ms`,
    worstP50?.p50 < 3,
  );
  add(
    'Mix, any single users-list request uncached: max < 20 ms',
    worstMax && `highest ${worstMax.kind} on ${worstMax.side}: ${fmt(worstMax.max, 1)} ms (${worstMax.slowest})`,
    worstMax?.max < 20,
  );
  const ratios = MIX_IDS_MEASURED.filter((id) => best[id]?.postgres && best[id]?.service).map((id) => ({
    id,
    ratio: best[id].postgres.rps / best[id].service.rps,
  }));
  const worst = ratios.sort((a, b) => a.ratio - b.ratio)[0];
  add('Mix on PostgreSQL: >= 50% of SQLite on each phase', worst && `lowest ${worst.id}: ${percent(worst.ratio)} of SQLite`, worst?.ratio >= 0.5);

  // Issue 32: on PostgreSQL, a PATCH in 20 requests costs the mix little, and its reads come nearer SQLite's.
  const pgRead = best['mix-read']?.postgres;
  const pgPatch = best['mix-patch']?.postgres;
  add(
    "Mix with user PATCHes on PostgreSQL: >= 90% of PostgreSQL's reads-only mix",
    pgRead && pgPatch && `${percent(pgPatch.rps / pgRead.rps)} (${fmt(pgPatch.rps)} of ${fmt(pgRead.rps)} req/s)`,
    pgPatch?.rps / pgRead?.rps >= 0.9,
  );
  const sqliteRead = best['mix-read']?.service;
  add(
    "Mix, reads only, on PostgreSQL: >= 60% of SQLite's",
    pgRead && sqliteRead && `${percent(pgRead.rps / sqliteRead.rps)} (${fmt(pgRead.rps)} of ${fmt(sqliteRead.rps)} req/s)`,
    pgRead?.rps / sqliteRead?.rps >= 0.6,
  );
}

/** Issue 32: PostgreSQL's writes (user PATCHes and artist POSTs, no reads) grow with connections instead of queueing on one row. */
function writesTargets(best, add) {
  const at = (c) => best[`writes-c${c}`]?.postgres;
  const one = at(1);
  const many = at(32);
  add(
    'Writes only on PostgreSQL: the rate at 32 connections >= 1.5x the rate at 1',
    one && many && `${fmt(many.rps / one.rps, 2)}x (${fmt(many.rps)} vs ${fmt(one.rps)} writes/s)`,
    many?.rps / one?.rps >= 1.5,
  );
  add(
    'Writes only on PostgreSQL: >= 2,000 acknowledged writes/s at 32 connections',
    many && `${fmt(many.rps)} writes/s (${fmt(many.errors)} errors)`,
    many?.rps >= 2000 && many.errors === 0,
  );
}

const MIX_IDS_MEASURED = ['mix-read', 'mix-song', 'mix-patch', 'mix-read-c1'];

/**
 * Issue 34: one webhook keeps up with the sustained write rate, on every backend measured: by the end
 * of a load of song POSTs, its receiver has at least 95% of the events written in it (the rest are
 * the last moments' events, on their way), every signature verified.
 */
function webhookTargets(webhook, add) {
  const runs = Object.entries(webhook?.sides ?? {}).flatMap(([side, rs]) => {
    const batched = rs.filter((r) => r.batch !== null).sort((a, b) => b.batch - a.batch)[0];
    return batched ? [{ backend: side === 'service' ? 'SQLite' : 'PostgreSQL', r: batched }] : [];
  });
  const measured = runs.length
    ? runs
        .map(
          ({ backend, r }) =>
            `${backend}: ${percent(r.written ? r.delivered / r.written : 0)} (${fmt(r.deliveredPerSecond)} delivered/s, ${fmt(r.writes.rps)} writes/s, batch_size ${r.batch})${r.badSignatures ? `, ${fmt(r.badSignatures)} bad signatures` : ''}`,
        )
        .join('; ')
    : undefined;
  add(
    'One webhook keeps up with sustained song POSTs: >= 95% of the events written delivered by the end of the load, each backend',
    measured,
    runs.length > 0 && runs.every(({ r }) => r.written > 0 && r.delivered / r.written >= 0.95 && !r.badSignatures),
  );
}

/** best[scenarioId][side] = measurement; extra = { readyMs, peakRss, usersIndex, pgReadyMs, mixLatency: { side: { kind: stats } } } */
export function evaluateTargets(best, extra) {
  const svc = (id) => best[id]?.service;
  const out = [];
  const add = (target, measured, met) => out.push({ target, measured, status: measured === undefined ? 'not measured' : met ? 'met' : 'NOT met' });
  mixTargets(best, extra, add);
  writesTargets(best, add);

  for (const [id, label] of [
    ['get-artist', 'GET an artist'],
    ['get-songs', 'GET the songs of an album'],
  ]) {
    const s = svc(id);
    const c = best[id]?.ceiling;
    const ratio = s && c ? s.rps / c.rps : undefined;
    add(
      `${label}: >= 70% of the ceiling's req/s`,
      ratio === undefined ? undefined : `${fmt(ratio * 100, 1)}% (${fmt(s.rps)} of ${fmt(c.rps)} req/s)`,
      ratio >= 0.7,
    );
  }
  const list = svc('users-p50');
  add('Users list (page 50): >= 10,000 req/s', list && `${fmt(list.rps)} req/s`, list?.rps >= 10_000);
  add('Users list (page 50): p99 < 10 ms', list && `${fmt(list.p99, 2)} ms`, list?.p99 < 10);
  const deep = svc('users-p4000-c1');
  add('Users list page 4000: p50 < 5 ms at 1 connection', deep && `${fmt(deep.p50, 2)} ms`, deep?.p50 < 5);
  const post = svc('post-song');
  add(
    'POST a song: >= 5,000 acknowledged writes/s at 32 connections',
    post && `${fmt(post.rps)} writes/s (${fmt(post.errors)} errors)`,
    post?.rps >= 5000 && post.errors === 0,
  );
  // Issue 37: at most 200 MB (decimal: 200,000,000 bytes, 190.7 MiB) a process with the users index, at 1M users:
  // VmHWM of the largest process (a worker) over the whole run, which counts the node binary's ~47 MiB of
  // shared file pages in each. The 150 MB of issue 7 was set before the users index (which holds ~70 MB
  // a worker at 1M users): it still stands for a run with USERS_INDEX=off.
  const peak = extra.peakRss && `${fmt(extra.peakRss / MB, 1)} MiB (${fmt(extra.peakRss / 1e6, 1)} MB)`;
  if (extra.usersIndex === false) add('Peak RSS (VmHWM) < 150 MiB a process through the whole run, USERS_INDEX=off', peak, extra.peakRss < 150 * MB);
  else add('Peak RSS (VmHWM) <= 200 MB (decimal, 190.7 MiB) a process through the whole run, users index on, 1M users', peak, extra.peakRss <= 200e6);
  add('Start to ready < 1 s', extra.readyMs !== undefined ? `${fmt(extra.readyMs)} ms` : undefined, extra.readyMs < 1000);

  webhookTargets(extra.webhook, add);

  const reads = ['get-artist', 'get-songs', 'users-p50', 'users-p4000', 'young-brazilians'];
  const ratios = reads.filter((id) => best[id]?.postgres && svc(id)).map((id) => ({ id, ratio: best[id].postgres.rps / svc(id).rps }));
  const worst = ratios.sort((a, b) => a.ratio - b.ratio)[0];
  add('PostgreSQL reads >= half the SQLite req/s', worst && `lowest ${worst.id}: ${fmt(worst.ratio * 100, 1)}% of SQLite`, worst?.ratio >= 0.5);
  return out;
}

export { fmt, percent, MB };
