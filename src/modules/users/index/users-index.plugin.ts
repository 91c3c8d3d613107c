import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge } from 'prom-client';
import { UsersIndexFeed } from './index-feed.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The users index of this worker (USERS_INDEX=on), or undefined: every users list is SQL. */
    usersIndex: UsersIndexFeed | undefined;
    /** Counts a users list answered by the index or by SQL (/metrics). */
    usersListAnswered(by: 'index' | 'sql'): void;
    /** Counts a single user (GET /users/{id}) answered by the index or by SQL (/metrics). */
    usersAnswered(by: 'index' | 'sql'): void;
  }
}

/**
 * The users index (issue 37), one per worker: started when the app is ready and loaded in the
 * background (until then, and for lists it does not answer, SQL answers), reported by /metrics.
 */
async function usersIndexPlugin(app: FastifyInstance) {
  let feed: UsersIndexFeed | undefined;
  app.decorate('usersIndex', undefined);
  const registers = [app.metrics];
  const answered = new Counter({ name: 'users_index_lists_total', help: 'Users lists answered, by the index or by SQL.', labelNames: ['by'], registers });
  app.decorate('usersListAnswered', (by: 'index' | 'sql') => answered.inc({ by }));
  const single = new Counter({
    name: 'users_index_single_users_total',
    help: 'Single users (GET /users/{id}) answered, by the index or by SQL.',
    labelNames: ['by'],
    registers,
  });
  app.decorate('usersAnswered', (by: 'index' | 'sql') => single.inc({ by }));
  if (!app.config.usersIndex) return;

  const gauge = (name: string, help: string, read: (f: UsersIndexFeed) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        if (feed) this.set(read(feed));
      },
    });
  gauge('users_index_ready', 'Whether the users index answers lists (1), or SQL does while it loads or after a failure (0).', (f) =>
    f.state === 'ready' ? 1 : 0,
  );
  gauge('users_index_users', 'Users held by the users index.', (f) => f.index.size);
  gauge('users_index_bytes', 'Approximate memory held by the users index (typed arrays, permutations, count table, dictionaries, emails).', (f) =>
    f.index.bytes(),
  );
  gauge('users_index_applied_sequence', 'The change feed sequence up to which every user event is applied to the users index.', (f) => f.applied);
  gauge('users_index_load_seconds', 'How long the users index took to load, from start to ready.', (f) => (f.loadMs ?? 0) / 1000);

  app.addHook('onReady', (done) => {
    feed = new UsersIndexFeed(app.db, app.log, app.config.eventsPollMs, app.versionsAfter);
    app.usersIndex = feed;
    done();
  });
  // Before the database closes: the load stops between pages, and no catch-up starts.
  app.addHook('preClose', async () => {
    if (!feed) return;
    feed.close();
    await feed.loaded.catch(() => undefined);
  });
}

export default fp(usersIndexPlugin, { name: 'users-index', dependencies: ['database', 'metrics'] });
