import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { badRequest, notFound } from '../../errors/index.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { lastSequence } from '../events/events.repository.js';
import { CreateWebhookBody, DeliveriesQuery, Webhook, WebhookDelivery, WebhookParams } from './webhooks.schemas.js';
import { createWebhook, deleteWebhook, findWebhook, listDeliveries, listWebhooks } from './webhooks.repository.js';
import { SIGNATURE_DESCRIPTION } from './webhooks.signature.js';
import { refusedTarget } from './webhooks.targets.js';

const tags = ['webhooks'];

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/webhooks', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'createWebhook',
      summary: 'Subscribe a URL to events',
      description: `Events of the given types written from now on are POSTed to \`url\`.\n\n${SIGNATURE_DESCRIPTION}`,
      body: CreateWebhookBody,
      response: {
        201: Type.Ref(Webhook, { description: 'Created; Location is its path. The secret is not shown.' }),
        ...errors(400, ...AUTH_ERRORS, 413, 415),
      },
    },
    handler: async (request, reply) => {
      const { url, types, secret } = request.body;
      const refused = refusedTarget(url, app.config.webhookAllowPrivate);
      if (refused) throw badRequest([{ field: 'url', target: refused }], 'Request validation failed.');
      const hook = await createWebhook(app.db, url, types, secret, await lastSequence(app.db));
      app.webhookDeliverer.activate();
      reply.code(201).header('Location', `/webhooks/${hook.id}`);
      return hook;
    },
  });

  app.get('/webhooks', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'listWebhooks',
      summary: 'List the webhooks',
      response: { 200: Type.Array(Type.Ref(Webhook), { maxItems: 1000 }), ...errors(...AUTH_ERRORS) },
    },
    handler: async () => listWebhooks(app.db),
  });

  app.get('/webhooks/:webhook_id', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'getWebhook',
      summary: 'Get a webhook and where its deliveries are',
      params: WebhookParams,
      response: { 200: Type.Ref(Webhook), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request) => {
      const hook = await findWebhook(app.db, request.params.webhook_id);
      if (!hook) throw notFound('Webhook');
      return hook;
    },
  });

  app.delete('/webhooks/:webhook_id', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'deleteWebhook',
      summary: 'Stop and delete a webhook, with its delivery log',
      params: WebhookParams,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request, reply) => {
      if (!(await deleteWebhook(app.db, request.params.webhook_id))) throw notFound('Webhook');
      return reply.code(204).send(null);
    },
  });

  app.get('/webhooks/:webhook_id/deliveries', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'listWebhookDeliveries',
      summary: 'The latest delivery attempts of a webhook, newest first',
      description: 'Every attempt, delivered or failed, with the answer or the error. Kept as long as events (EVENTS_RETENTION_DAYS).',
      params: WebhookParams,
      querystring: DeliveriesQuery,
      response: { 200: Type.Array(Type.Ref(WebhookDelivery), { maxItems: 100 }), ...errors(400, ...AUTH_ERRORS, 404) },
    },
    handler: async (request) => {
      const id = request.params.webhook_id;
      if (!(await findWebhook(app.db, id))) throw notFound('Webhook');
      return listDeliveries(app.db, id, request.query.size ?? 50);
    },
  });
};
