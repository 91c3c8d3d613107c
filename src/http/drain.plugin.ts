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
  // Callback hooks: they run on every request and have nothing to wait for.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('Connection', 'close');
    done(null, payload);
  });
  app.addHook('onResponse', (_request, _reply, done) => {
    if (draining) app.server.closeIdleConnections();
    done();
  });
}

export default fp(drainPlugin, { name: 'drain' });
