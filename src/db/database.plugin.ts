import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Connection } from './connect.js';
import type { Db } from './database.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    connection: Connection;
  }
}

async function databasePlugin(app: FastifyInstance, opts: { connection: Connection }) {
  app.decorate('connection', opts.connection);
  app.decorate('db', opts.connection.db);
  app.addHook('onClose', async () => {
    await opts.connection.close();
  });
}

export default fp(databasePlugin, { name: 'database' });
