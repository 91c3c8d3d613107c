import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Db } from '../db/database.js';
import { withFreeIds } from '../db/identity.js';
import { AppError, ErrorBody, isUniqueViolation } from '../errors/index.js';
import { addRequestHeaders, addResponse } from './route-schema.js';
import {
  completeKey,
  dropExpiredKey,
  findKey,
  purgeExpiredKeys,
  releaseKey,
  renewLease,
  reserveKey,
  takeOverKey,
  type Lease,
} from './idempotency.repository.js';

// Idempotent POST: a route opts in with `config: { idempotent: true }` (the creating POSTs of artists,
// albums, songs and users) and writes through `reply.created`, as every creating POST does (it also
// passes ids written by hand ahead of PostgreSQL's sequence, db/identity.ts). POST /tokens stays out on purpose:
// its answer holds the new token's secret, and replaying it would mean storing that secret in
// idempotency_keys, where tokens are kept only as hashes. A retried POST /tokens makes another token;
// the unused one can be revoked.
//
// A request carrying an Idempotency-Key first reserves (caller, key) with an INSERT guarded by a
// unique constraint, so of any number of concurrent duplicates exactly one runs the handler; the
// others wait for its answer and replay it.
//
// One effect per key: the keyed write runs in a transaction that also stores its answer (status,
// Location, the body exactly as serialised for the client) in the key's row, only if this request
// still holds the key (reply.created). The answer is durable exactly when the write is: a process killed
// before the commit leaves neither (the retry runs the write once), after it both (the retry replays).
// Unkeyed writes are untouched: they keep the shared commits of db/group-commit.ts and
// db/pg-batch.ts, which a keyed write does not join (its transaction holds its own statements).
// Answers without a write (a 4xx) are stored as they are sent (onSend). A failure on our side (5xx)
// frees the key for a retry.
//
// A reservation is a lease owned by its request (a random owner id), IDEMPOTENCY_LEASE_SECONDS long
// (45 s by default) and renewed four times per lease while the request runs. The lease outlasts the
// longest wait for a pooled connection (30 s), which a renewal may have to wait out too, so a live
// request does not lose its key to a duplicate. A request that dies without freeing its key (the process
// SIGKILLed, the database gone so that the freeing write failed too) stops renewing; once the lease
// lapses, a waiting duplicate takes the reservation over (one conditional UPDATE, so one taker wins)
// and runs the request anew. So a retry either replays a stored answer or runs again; it never meets
// a 409 (whose Retry-After says when the lease lapses) for longer than the lease after the first
// request ended, on any instance. A request that lost its key that way while it was still running
// (stalled past its lease) finds it gone when it stores its answer: its write is rolled back and it
// answers 409, so the key still has the one effect, the taker's.

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POST route that honours Idempotency-Key. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotencyLease: HeldLease | null;
  }
  interface FastifyReply {
    /**
     * Runs a creating write and makes the answer 201 (with `Location`, when given) with what it
     * returns, which the handler returns; an insert that meets an id written by hand ahead of
     * PostgreSQL's sequence runs again past it (db/identity.ts). Under an Idempotency-Key the write runs in a transaction
     * that stores that answer with it, so `write` must do all its work on the `db` it is given.
     * Undefined when `write` finds nothing to write under (it returns undefined): the route answers that.
     */
    created<T extends object | undefined>(write: (db: Db) => Promise<T>, location?: (row: NonNullable<T>) => string): Promise<T>;
  }
}

const REPLAYED_HEADERS = ['location', 'etag'];
/** How long a duplicate waits for the first request's answer before giving up with 409. */
const WAIT_FOR_FIRST_MS = 10_000;
const POLL_MS = 20;
const PURGE_EVERY_MS = 60_000;

interface HeldLease extends Lease {
  renewal: NodeJS.Timeout;
}

export const IdempotencyKeyHeader = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7E]*$',
  'x-error-message': 'Must be 1..255 printable ASCII characters.',
  description:
    'Makes the POST safe to retry: the same key with the same body within the retention time (IDEMPOTENCY_TTL_SECONDS, 24 h by default) creates nothing new and replays the first answer (`Idempotent-Replayed: true`); the same key with another body is 409.',
});

/** Canonical JSON (sorted keys): the same body however its keys were ordered. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fingerprint(request: FastifyRequest): string {
  const path = request.url.split('?')[0];
  return createHash('sha256')
    .update(`${request.method} ${path}\n${canonical(request.body)}`)
    .digest('hex');
}

function callerOf(request: FastifyRequest): string {
  const caller = request.caller;
  if (!caller) return 'anonymous';
  return caller.tokenId === null ? 'bootstrap-admin' : `token:${caller.tokenId}`;
}

/** The headers of an answer that are part of it for a replay. */
function replayedHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

const leaseLost = () =>
  new AppError(
    'CONFLICT',
    'This request ran past the lease of its Idempotency-Key and a retry took the key over; nothing was written. Retry to get that answer.',
    undefined,
    {
      'Retry-After': '1',
    },
  );

async function idempotencyPlugin(app: FastifyInstance) {
  let lastPurge = 0;
  /** How long a reservation stays held without renewal: the longest a dead request blocks its retry. */
  const leaseMs = app.config.idempotencyLeaseSeconds * 1000;
  /** Crash tests only (TEST_ONLY_KILL_AFTER_KEYED_WRITES): die right after this many keyed writes committed. */
  const killAfter = app.config.testOnlyKillAfterKeyedWrites;
  let keyedWrites = 0;
  app.decorateRequest('idempotencyLease', null);

  async function created<T extends object>(this: FastifyReply, write: (db: Db) => Promise<T | undefined>, location?: (row: T) => string) {
    // An id written by hand ahead of PostgreSQL's identity sequence is passed, not answered 409 (db/identity.ts).
    return withFreeIds(app.db, () => createdOnce<T>(this, write, location));
  }

  async function createdOnce<T extends object>(reply: FastifyReply, write: (db: Db) => Promise<T | undefined>, location?: (row: T) => string) {
    const lease = reply.request.idempotencyLease;
    if (lease === null) {
      const row = await write(app.db);
      if (row === undefined) return undefined;
      reply.code(201);
      if (location) reply.header('Location', location(row));
      return row;
    }
    // Location is set only once the write is committed: a rolled-back write must not name a row.
    const answer = await app.db.transaction().execute(async (trx) => {
      const row = await write(trx);
      if (row === undefined) return undefined;
      reply.code(201); // the 201 response schema serialises the body, as it does on send
      const body = reply.serialize(row) as string;
      const headers = { ...replayedHeaders(reply), ...(location ? { location: location(row) } : {}) };
      if (!(await completeKey(trx, lease, { status: 201, headers, body }))) throw leaseLost();
      return { row, body, headers };
    });
    if (answer === undefined) return undefined;
    reply.request.idempotencyLease = null; // answered: onSend has nothing left to store
    clearInterval(lease.renewal);
    if (killAfter > 0 && ++keyedWrites === killAfter) process.kill(process.pid, 'SIGKILL');
    // The client gets the very bytes stored for a replay (anything else sent instead, as JSON).
    reply
      .headers(answer.headers)
      .type('application/json; charset=utf-8')
      .serializer((payload: unknown) => (payload === answer.row ? answer.body : JSON.stringify(payload)));
    return answer.row;
  }
  app.decorateReply('created', created);

  /** This request now holds the key: renew its lease until its answer is stored or the key freed. */
  function hold(request: FastifyRequest, lease: Lease) {
    const renewal = setInterval(() => {
      renewLease(app.db, lease, new Date(Date.now() + leaseMs)).catch((err: unknown) => {
        request.log.warn({ err }, 'could not renew the lease of an Idempotency-Key');
      });
    }, leaseMs / 4);
    renewal.unref();
    request.idempotencyLease = { ...lease, renewal };
  }

  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.config?.idempotent) return;
    addRequestHeaders(route, { 'idempotency-key': Type.Optional(IdempotencyKeyHeader) });
    addResponse(
      route,
      409,
      Type.Ref(ErrorBody, { description: 'The Idempotency-Key was used with a different request, or its first request is still running.' }),
    );
    // Route-level hooks: the routes that did not opt in pay nothing.
    route.preHandler = [...hookList(route.preHandler), reserve];
    route.onSend = [...hookList(route.onSend), record];
    // A request that ends without onSend (its connection gone) must not renew its lease forever.
    route.onResponse = [...hookList(route.onResponse), stopRenewing];
  });

  async function reserve(request: FastifyRequest, reply: FastifyReply) {
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string') return;
    const caller = callerOf(request);
    const print = fingerprint(request);
    const deadline = Date.now() + WAIT_FOR_FIRST_MS;
    let waiting = false;
    for (;;) {
      const now = new Date();
      if (now.getTime() - lastPurge > PURGE_EVERY_MS) {
        lastPurge = now.getTime();
        await purgeExpiredKeys(app.db, now);
      }
      const owner = randomUUID();
      const leaseUntil = new Date(now.getTime() + leaseMs);
      try {
        const id = await reserveKey(app.db, { caller, key, fingerprint: print, now, ttlSeconds: app.config.idempotencyTtlSeconds, owner, leaseUntil });
        hold(request, { id, owner });
        return; // this request runs; onSend stores its answer
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      const record = await findKey(app.db, caller, key);
      if (!record) continue; // released or expired meanwhile: try again
      if (record.expires_at <= now.toISOString()) {
        await dropExpiredKey(app.db, record);
        continue;
      }
      if (record.fingerprint !== print) {
        throw new AppError('CONFLICT', 'This Idempotency-Key was already used with a different request.');
      }
      if (record.status !== null) {
        reply.code(record.status).headers(JSON.parse(record.headers ?? '{}') as Record<string, string>);
        reply.header('Idempotent-Replayed', 'true').type('application/json; charset=utf-8');
        return reply.send(record.body ?? '');
      }
      if (record.lease_until === null || record.lease_until <= now.toISOString()) {
        // Its request died without an answer: run it again, unless another retry took it first.
        if (await takeOverKey(app.db, record, owner, leaseUntil)) {
          request.log.info({ key: record.id }, 'took over the lapsed reservation of an Idempotency-Key');
          hold(request, { id: record.id, owner });
          return;
        }
        continue;
      }
      if (Date.now() > deadline) {
        // Retry-After: when the lease lapses if its request has died; sooner if it answers.
        const lapse = Math.ceil((Date.parse(record.lease_until) - Date.now()) / 1000);
        throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry later.', undefined, {
          'Retry-After': String(Math.max(1, lapse)),
        });
      }
      if (!waiting) request.log.debug('Idempotency-Key held by a request still running: waiting for its answer');
      waiting = true;
      await sleep(POLL_MS);
    }
  }

  async function stopRenewing(request: FastifyRequest) {
    if (request.idempotencyLease) clearInterval(request.idempotencyLease.renewal);
  }

  async function record(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const lease = request.idempotencyLease;
    if (lease === null) return payload;
    request.idempotencyLease = null;
    clearInterval(lease.renewal);
    try {
      if (reply.statusCode >= 500 || typeof payload !== 'string') {
        await releaseKey(app.db, lease);
      } else {
        // An answer without a write of its own (a 4xx; a route that writes outside reply.created).
        await completeKey(app.db, lease, { status: reply.statusCode, headers: replayedHeaders(reply), body: payload });
      }
    } catch (err) {
      // The answer itself is fine; a retry waits for the lease to lapse and then runs again.
      request.log.error({ err }, 'could not record the idempotent answer');
    }
    return payload;
  }
}

function hookList<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

export default fp(idempotencyPlugin, { name: 'idempotency', dependencies: ['database', 'auth'] });
