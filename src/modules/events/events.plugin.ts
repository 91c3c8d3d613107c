import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { EventFeed } from './events.feed.js';
import type { EventStream } from './events.stream.js';
import { deleteEventsBefore } from './events.repository.js';
import { publisherOf } from './events.publisher.js';
import { isPostgres } from '../../db/dialect.js';
import { outageLog } from '../../outage-log.js';

/**
 * What the events plugin gives the plugins and routes registered after it (`app.events`): typed
 * methods, so that a plugin that listens declares `dependencies: ['events']` and can do nothing else
 * with them than what is written here.
 */
export interface Events {
  /** The one reader of new events in this process (streams and webhook deliveries listen to it). */
  readonly feed: EventFeed;
  /** An open stream, ended when the server closes (it never ends by itself); the returned function forgets it. */
  open(stream: EventStream): () => void;
  /** Runs `listener` after each write this process answered: new events are waiting, no need to wait for the poll. */
  afterWrite(listener: () => void): void;
  /**
   * Joins the retention job: `prune(cutoff)` deletes what is older than `cutoff` (ISO time) and
   * resolves with how many rows went; `what` names it in the log ("deleting <what> failed").
   */
  retain(what: string, prune: (cutoff: string) => Promise<number>): void;
  /**
   * The retention job, now: every part deletes what is older than EVENTS_RETENTION_DAYS (nothing when
   * 0). Resolves with how many rows each part deleted, by `what`.
   */
  prune(): Promise<Record<string, number>>;
}

declare module 'fastify' {
  interface FastifyInstance {
    events: Events;
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const HOUR = 3600_000;

async function eventsPlugin(app: FastifyInstance) {
  const feed = new EventFeed(app.db, app.config.eventsPollMs, app.log);
  const streams = new Set<EventStream>();
  // A write answered here has committed its events: streams and webhooks need not wait for the poll.
  // It may have revoked a token too: the feed then asks which of its streams' tokens still work.
  const listeners: (() => void)[] = [() => feed.wake(true)];
  const days = app.config.eventsRetentionDays;
  const parts: { what: string; prune: (cutoff: string) => Promise<number>; log: ReturnType<typeof outageLog> }[] = [];

  const events: Events = {
    feed,
    open(stream) {
      streams.add(stream);
      return () => void streams.delete(stream);
    },
    afterWrite: (listener) => void listeners.push(listener),
    // Hourly: an outage across several runs is logged when it starts and when it ends, not at each run.
    retain: (what, prune) => void parts.push({ what, prune, log: outageLog(app.log, `deleting ${what} past EVENTS_RETENTION_DAYS`) }),
    async prune() {
      const deleted: Record<string, number> = {};
      if (days === 0) return deleted;
      const cutoff = new Date(Date.now() - days * 24 * HOUR).toISOString();
      let failure: Error | undefined;
      for (const part of parts) {
        try {
          deleted[part.what] = await part.prune(cutoff);
          part.log.succeeded();
          if (deleted[part.what]! > 0) app.log.info({ deleted: deleted[part.what], cutoff }, `${part.what} past EVENTS_RETENTION_DAYS deleted`);
        } catch (err) {
          part.log.failed(err);
          failure ??= err instanceof Error ? err : new Error(String(err));
        }
      }
      if (failure !== undefined) throw failure;
      return deleted;
    },
  };
  app.decorate('events', events);
  events.retain('events', (cutoff) => deleteEventsBefore(app.db, cutoff));

  app.addHook('onResponse', (request, reply, done) => {
    if (WRITES.has(request.method) && reply.statusCode < 400) for (const wake of listeners) wake();
    done();
  });

  // Streams never end by themselves: the server could not close while one is open.
  app.addHook('preClose', (done) => {
    for (const stream of streams) stream.end();
    feed.close();
    done();
  });

  // PostgreSQL: events wait unnumbered until published (events.publisher.ts). Readers publish before they
  // read; this pass publishes when nobody reads, so streams, webhooks and other instances' feeds move
  // and the pending rows stay few, and vacuums events_pending now and then. Half a period after another
  // process's pass moved events, it publishes nothing (events_settle, migration 20261127T1000).
  if (isPostgres(app.db)) {
    const publisher = publisherOf(app.db);
    const settleLog = outageLog(app.log, 'publishing events');
    const vacuumLog = outageLog(app.log, 'vacuuming events_pending');
    let settling: NodeJS.Timeout | undefined;
    app.addHook('onReady', (done) => {
      settling = setInterval(
        () =>
          void publisher.settle(vacuumLog, Math.floor(app.config.pgSettleMs / 2)).then(
            () => settleLog.succeeded(),
            (err: unknown) => {
              if (settling) settleLog.failed(err);
            },
          ),
        app.config.pgSettleMs,
      ).unref();
      done();
    });
    // Stopped before the pool closes, so no pass starts on a destroyed pool. One under way is not waited
    // for here (the database may be what is stuck: its connection waits up to PG_CONNECT_TIMEOUT_MS); the
    // pool's own close waits for the connection it holds, and its failure, now, is not logged.
    app.addHook('preClose', (done) => {
      clearInterval(settling);
      settling = undefined;
      done();
    });
  }

  // The one retention job: a minute after start (never holding the start up, nor taking a connection
  // while the start's own queries run), then hourly; every instance may run it (deleting twice deletes
  // nothing more). Its parts: the events, and what other plugins keep as long (webhook deliveries).
  if (days > 0) {
    const run = () => void events.prune().catch(() => {}); // each part has logged its own failure
    const timer = setInterval(run, HOUR).unref();
    const first = setTimeout(run, 60_000).unref();
    app.addHook('onClose', (_app, done) => {
      clearInterval(timer);
      clearTimeout(first);
      done();
    });
  }
}

export default fp(eventsPlugin, { name: 'events', dependencies: ['database'] });
