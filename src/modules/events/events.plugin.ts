import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { EventFeed } from './events.feed.js';
import type { EventStream } from './events.stream.js';
import { deleteEventsBefore } from './events.repository.js';

declare module 'fastify' {
  interface FastifyInstance {
    eventFeed: EventFeed;
    eventStreams: Set<EventStream>;
    /** Called after a write this process answered: new events are waiting. */
    onEventsWritten: Set<() => void>;
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const HOUR = 3600_000;

async function eventsPlugin(app: FastifyInstance) {
  const feed = new EventFeed(app.db, app.config.eventsPollMs, app.log);
  app.decorate('eventFeed', feed);
  app.decorate('eventStreams', new Set<EventStream>());
  app.decorate('onEventsWritten', new Set<() => void>([() => feed.wake()]));

  // A write answered here has committed its events: streams and webhooks need not wait for the poll.
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

  const days = app.config.eventsRetentionDays;
  if (days > 0) {
    const prune = () => {
      const cutoff = new Date(Date.now() - days * 24 * HOUR).toISOString();
      deleteEventsBefore(app.db, cutoff).then(
        (n) => n > 0 && app.log.info({ deleted: n, cutoff }, 'events past EVENTS_RETENTION_DAYS deleted'),
        (err: unknown) => app.log.warn({ err }, 'deleting old events failed; the next run tries again'),
      );
    };
    const timer = setInterval(prune, HOUR).unref();
    app.addHook('onReady', (done) => {
      prune();
      done();
    });
    app.addHook('onClose', (_app, done) => {
      clearInterval(timer);
      done();
    });
  }
}

export default fp(eventsPlugin, { name: 'events', dependencies: ['database'] });
