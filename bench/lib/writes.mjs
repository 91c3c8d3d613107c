// The writes-only phase (issue 32): how the write rate grows with connections, on every backend.
// Pure: the request list is drawn from a seed and the dataset's size, never from a running service.
import { rng } from './mix.mjs';

export const WRITES_ID = 'writes';
/** The connection counts the issue asks for: the rate at 32 is held against the rate at 1. */
export const WRITES_CONNECTIONS = [1, 4, 16, 32];
export const WRITES_PHASES = WRITES_CONNECTIONS.map((c) => ({
  id: `writes-c${c}`,
  title: `writes only, ${c} connection${c === 1 ? '' : 's'}`,
  connections: c,
}));
/** What `--only writes` stands for. */
export const WRITES_IDS = WRITES_PHASES.map((p) => p.id);
/** Every artist the phase creates has a name starting with this: how they are found and deleted after each run. */
export const WRITES_ARTIST_PREFIX = 'Bench writes artist ';
/** Users the PATCHes are spread over: few enough to put back after each run, many enough that 32 connections rarely meet on one. */
export const WRITES_USER_POOL = 2_000;
/** Requests in a run's list: past it the list starts again (a PATCH then sends a body its user already has). */
export const WRITES_COUNT = 40_000;

/**
 * opts: { seed, users, count, pool }. Returns { users: [id], writes: [{ kind: 'patch', id, body } |
 * { kind: 'artist', body }] }: PATCHes of users drawn at random from 1..users (`pool` distinct ones,
 * cycled) and POSTs of artists, alternating; every body in the list differs from the others of its
 * kind (a PATCH's status and age, an artist's name and image).
 */
export function generateWrites(opts) {
  const o = { seed: 32, count: WRITES_COUNT, pool: WRITES_USER_POOL, ...opts };
  if (!(o.users >= 1)) throw new Error('generateWrites needs the number of users');
  const random = rng(o.seed);
  const int = (min, max) => min + Math.floor(random() * (max - min + 1));
  const users = [];
  const taken = new Set();
  while (users.length < Math.min(o.pool, o.users)) {
    const id = int(1, o.users);
    if (taken.has(id)) continue;
    taken.add(id);
    users.push(id);
  }
  const writes = [];
  for (let i = 0; i < o.count; i++) {
    if (i % 2 === 0) {
      const k = i / 2;
      // Age from the index: the same user gets a different age each time it comes round in the list.
      writes.push({ kind: 'patch', id: users[k % users.length], body: { status: random() < 0.5 ? 'active' : 'inactive', age: (k * 7 + int(0, 6)) % 151 } });
    } else {
      writes.push({ kind: 'artist', body: { name: `${WRITES_ARTIST_PREFIX}${i}`, image: `https://img.example.com/bench-writes/${i}.jpg` } });
    }
  }
  return { users, writes };
}

/** One side's wrk requests: PATCHes with its admin token, POSTs with its write token. */
export function writesRequests(writes, tokens) {
  const json = (scope) => ({ Authorization: `Bearer ${tokens[scope]}`, 'Content-Type': 'application/json' });
  return writes.map((w) =>
    w.kind === 'patch'
      ? { method: 'PATCH', path: `/users/${w.id}`, headers: json('admin'), body: JSON.stringify(w.body) }
      : { method: 'POST', path: '/artists', headers: json('write'), body: JSON.stringify(w.body) },
  );
}

/**
 * The users a run may have changed: a run of `sent` requests (the answered ones plus one in flight per
 * connection) starts at the head of the list, so it PATCHed the first ceil(sent / 2) of the list's
 * PATCHes, each user of the pool once until the pool wraps.
 */
export function patchedUsers(users, sent) {
  return users.slice(0, Math.min(users.length, Math.ceil(sent / 2)));
}
