import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Connection } from './connect.js';
import type { Db } from './database.js';
import { versionsAfter, type VersionsAfter } from './arrivals.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    connection: Connection;
    /** The tables' versions read after a request arrived, shared by the requests that had arrived (db/arrivals.ts). */
    versionsAfter: VersionsAfter;
  }
}

async function databasePlugin(app: FastifyInstance, opts: { connection: Connection }) {
  app.decorate('connection', opts.connection);
  app.decorate('db', opts.connection.db);
  app.decorate('versionsAfter', versionsAfter(opts.connection.db));
  app.addHook('onClose', async () => {
    await opts.connection.close();
  });
}

export default fp(databasePlugin, { name: 'database' });
