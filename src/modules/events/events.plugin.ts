import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { EventFeed } from './events.feed.js';
import type { EventStream } from './events.stream.js';
import { deleteEventsBefore } from './events.repository.js';
import { outageLog } from '../../outage-log.js';

declare module 'fastify' {
  interface FastifyInstance {
    eventFeed: EventFeed;
    eventStreams: Set<EventStream>;
    /** Called after a write this process answered: new events are waiting. */
    onEventsWritten: Set<() => void>;
    /** Deletes events older than EVENTS_RETENTION_DAYS (none when 0); resolves with how many. */
    pruneEvents(): Promise<number>;
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const HOUR = 3600_000;

async function eventsPlugin(app: FastifyInstance) {
  const feed = new EventFeed(app.db, app.config.eventsPollMs, app.log);
  app.decorate('eventFeed', feed);
  app.decorate('eventStreams', new Set<EventStream>());
  app.decorate('onEventsWritten', new Set<() => void>([() => feed.wake(true)]));

  // A write answered here has committed its events: streams and webhooks need not wait for the poll.
  // It may have revoked a token too: the feed then asks which of its streams' tokens still work.
  app.addHook('onResponse', (request, reply, done) => {
    if (WRITES.has(request.method) && reply.statusCode < 400) for (const wake of app.onEventsWritten) wake();
    done();
  });

  // Streams never end by themselves: the server could not close while one is open.
  app.addHook('preClose', (done) => {
    for (const stream of app.eventStreams) stream.end();
    feed.close();
    done();
  });

  // Retention: at start, then hourly; every instance may run it (deleting twice deletes nothing more).
  const days = app.config.eventsRetentionDays;
  // Hourly: an outage across several runs is logged when it starts and when it ends, not at each run.
  const pruning = outageLog(app.log, 'deleting events past EVENTS_RETENTION_DAYS');
  app.decorate('pruneEvents', async () => {
    if (days === 0) return 0;
    const cutoff = new Date(Date.now() - days * 24 * HOUR).toISOString();
    const deleted = await deleteEventsBefore(app.db, cutoff);
    pruning.succeeded();
    if (deleted > 0) app.log.info({ deleted, cutoff }, 'events past EVENTS_RETENTION_DAYS deleted');
    return deleted;
  });
  if (days > 0) {
    const prune = () => void app.pruneEvents().catch((err: unknown) => pruning.failed(err));
    const timer = setInterval(prune, HOUR).unref();
    // A minute after start (then hourly): never holding the start up, nor taking a connection while
    // the start's own queries run.
    const first = setTimeout(prune, 60_000).unref();
    app.addHook('onClose', (_app, done) => {
      clearInterval(timer);
      clearTimeout(first);
      done();
    });
  }
}

export default fp(eventsPlugin, { name: 'events', dependencies: ['database'] });
