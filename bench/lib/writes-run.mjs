// The writes-only phase in the harness: its request list per side, and after each run putting the
// dataset back as seeded (the PATCHed users' status and age, the created artists deleted), so that
// the phases after it, and PostgreSQL's database across runs, read the seeded rows.
import { originalsOf, sequential } from './mix-run.mjs';
import { WRITES_ARTIST_PREFIX, generateWrites, patchedUsers, writesRequests } from './writes.mjs';

export { WRITES_ID, WRITES_IDS, WRITES_PHASES } from './writes.mjs';

const LANES = 4;

/** Sends requests over a few keep-alive connections at once, each its share in order; any non-2xx fails. */
async function inLanes(base, requests) {
  const lanes = Array.from({ length: LANES }, (_, lane) => requests.filter((_, i) => i % LANES === lane));
  return (await Promise.all(lanes.map((lane) => sequential(base, lane)))).flat();
}

/** sides: [{ side, tokens }]; the users' originals come from the pristine dataset file. */
export function prepareWrites({ o, pristine, users, sides }) {
  const { users: pool, writes } = generateWrites({ seed: o.mixSeed, users });
  const originals = originalsOf(pristine, pool);
  return { pool, originals, requests: Object.fromEntries(sides.map(({ side, tokens }) => [side, writesRequests(writes, tokens)])) };
}

/**
 * After a run on a side: its artists are deleted, then its users get their status and age back. wrk's
 * count of the requests answered can fall short of what the service received by more than one request
 * in flight per connection, so the users put back are also those of every PATCH sent before the last
 * artist POST answered, and of one more per connection: with at most `connections` requests
 * outstanding, a run that created N artists answered at most N + connections + 1 PATCHes.
 */
export async function restoreWrites(base, tokens, run, sent, connections) {
  const admin = { Authorization: `Bearer ${tokens.admin}`, 'Content-Type': 'application/json' };
  let artists = 0;
  const page = {
    method: 'GET',
    path: `/artists?name_starts_with=${encodeURIComponent(WRITES_ARTIST_PREFIX)}&size=100`,
    headers: { Authorization: admin.Authorization },
  };
  for (;;) {
    const [res] = await sequential(base, [page]);
    const found = JSON.parse(res.body.toString('utf8')).filter((a) => a.name.startsWith(WRITES_ARTIST_PREFIX));
    if (!found.length) break;
    await inLanes(
      base,
      found.map((a) => ({ method: 'DELETE', path: `/artists/${a.id}`, headers: { Authorization: admin.Authorization } })),
    );
    artists += found.length;
  }
  const users = patchedUsers(run.pool, Math.max(sent, 2 * (artists + connections + 1)));
  await inLanes(
    base,
    users.map((id) => ({ method: 'PATCH', path: `/users/${id}`, headers: admin, body: JSON.stringify(run.originals.get(id)) })),
  );
  return { users: users.length, artists };
}
