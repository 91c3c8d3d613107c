import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { WebhookDeliverer } from './webhooks.deliverer.js';
import { deleteDeliveriesBefore } from './webhooks.repository.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhookDeliverer: WebhookDeliverer;
  }
}

async function webhooksPlugin(app: FastifyInstance) {
  const deliverer = new WebhookDeliverer(app.db, app.config, app.log);
  app.decorate('webhookDeliverer', deliverer);
  app.events.afterWrite(() => deliverer.wakeForWrite());
  app.addHook('onReady', (done) => {
    deliverer.start();
    done();
  });
  app.addHook('preClose', (done) => {
    deliverer.close();
    done();
  });
  // The delivery log is kept as long as the events it names: a part of the events' retention job.
  app.events.retain('webhook deliveries', (cutoff) => deleteDeliveriesBefore(app.db, cutoff));
}

export default fp(webhooksPlugin, { name: 'webhooks', dependencies: ['database', 'events'] });
