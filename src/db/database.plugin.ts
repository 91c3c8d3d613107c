import cluster from 'node:cluster';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Connection } from './connect.js';
import type { Db } from './database.js';
import { versionsAfter, type VersionsAfter } from './arrivals.js';
import { isSqliteFile, leaveCheckpointsToCheckpointer, startWalCheckpointer, type WalCheckpointer } from './wal-checkpoint.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    connection: Connection;
    /** The tables' versions read after a request arrived, shared by the requests that had arrived (db/arrivals.ts). */
    versionsAfter: VersionsAfter;
    /** This process's WAL checkpointer (SQLite file, single process); undefined in a cluster worker (the primary runs it) and on PostgreSQL. */
    walCheckpointer: WalCheckpointer | undefined;
  }
}

async function databasePlugin(app: FastifyInstance, opts: { connection: Connection }) {
  app.decorate('connection', opts.connection);
  app.decorate('db', opts.connection.db);
  app.decorate('versionsAfter', versionsAfter(opts.connection.db));
  // The WAL is checkpointed by a connection that serves no request (db/wal-checkpoint.ts): in a cluster
  // the primary's (cluster.ts), in a single process one of its own here.
  const sqliteFile = opts.connection.sqlite !== undefined && isSqliteFile(app.config.databaseUrl);
  const checkpointer = sqliteFile && !cluster.isWorker ? startWalCheckpointer(app.config) : undefined;
  if (sqliteFile) leaveCheckpointsToCheckpointer(opts.connection.sqlite!);
  app.decorate('walCheckpointer', checkpointer);
  app.addHook('onClose', async () => {
    checkpointer?.stop();
    await opts.connection.close();
  });
}

export default fp(databasePlugin, { name: 'database' });
