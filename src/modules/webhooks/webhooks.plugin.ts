import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { WebhookDeliverer } from './webhooks.deliverer.js';
import { deleteDeliveriesBefore } from './webhooks.repository.js';
import { outageLog } from '../../outage-log.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhookDeliverer: WebhookDeliverer;
  }
}

async function webhooksPlugin(app: FastifyInstance) {
  const deliverer = new WebhookDeliverer(app.db, app.config, app.log);
  app.decorate('webhookDeliverer', deliverer);
  app.onEventsWritten.add(() => deliverer.wakeForWrite());
  app.addHook('onReady', (done) => {
    deliverer.start();
    done();
  });
  app.addHook('preClose', (done) => {
    deliverer.close();
    done();
  });
  const days = app.config.eventsRetentionDays;
  if (days > 0) {
    // The delivery log is kept as long as the events it names.
    const pruning = outageLog(app.log, 'deleting old webhook deliveries');
    const prune = () =>
      void deleteDeliveriesBefore(app.db, new Date(Date.now() - days * 24 * 3600_000).toISOString()).then(
        () => pruning.succeeded(),
        (err: unknown) => pruning.failed(err),
      );
    const timer = setInterval(prune, 3600_000).unref();
    app.addHook('onClose', (_app, done) => {
      clearInterval(timer);
      done();
    });
  }
}

export default fp(webhooksPlugin, { name: 'webhooks', dependencies: ['database', 'events'] });
