import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';

/**
 * Graceful drain on close: requests already in flight finish normally, but their connections are
 * not kept alive afterwards. Node closes only the connections idle at the moment close() is
 * called, so without this a client holding a finished keep-alive connection would hold up the
 * shutdown until it chose to let go.
 */
async function drainPlugin(app: FastifyInstance) {
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (draining) reply.header('Connection', 'close');
  });
  app.addHook('onResponse', async () => {
    if (draining) app.server.closeIdleConnections();
  });
}

export default fp(drainPlugin, { name: 'drain' });
