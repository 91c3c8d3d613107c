import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { badRequest, notFound } from '../../errors/index.js';
import { AUTH_ERRORS, errors } from '../../schemas.js';
import { lastSequence } from '../events/events.repository.js';
import { LIST_HEADERS, listQuery, listQuerystring, setListHeaders } from '../../query/index.js';
import { CreateWebhookBody, PatchWebhookBody, Webhook, WebhookDelivery, WebhookParams, deliveriesCollection } from './webhooks.schemas.js';
import { createWebhook, deleteWebhook, findWebhook, listWebhooks, oldestSequence, pageDeliveries, reviseWebhook } from './webhooks.repository.js';
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
      const { url, types, secret, batch_size: batchSize = 1 } = request.body;
      const refused = refusedTarget(url, app.config.webhookAllowPrivate);
      if (refused) throw badRequest([{ field: 'url', target: refused }], 'Request validation failed.');
      const head = await lastSequence(app.db);
      const hook = await reply.created(
        (db) => createWebhook(db, url, types, secret, batchSize, head),
        (created) => `/webhooks/${created.id}`,
      );
      app.webhookDeliverer.activate();
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

  app.patch('/webhooks/:webhook_id', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'updateWebhook',
      summary: 'Resume a webhook, move where its deliveries go on, or change its batch size',
      description:
        '`{"status": "active"}` resumes a `failing` webhook after its `last_sequence`: nothing is skipped while the backlog is within EVENTS_RETENTION_DAYS (recreating it would start at the newest event instead). `from` moves where deliveries go on: back to send events again, forward to skip them. A POST under way when this arrives is logged but moves nothing: deliveries go on from what this sets.',
      params: WebhookParams,
      body: PatchWebhookBody,
      response: { 200: Type.Ref(Webhook, { description: 'The webhook as changed.' }), ...errors(400, ...AUTH_ERRORS, 404, 413, 415) },
    },
    handler: async (request) => {
      const id = request.params.webhook_id;
      const { status, from, batch_size: batchSize } = request.body;
      let cursor: number | undefined;
      if (from !== undefined) {
        // The newest event and the oldest kept, read before the change: `from` may name the next
        // event to be written, never one further on, nor one retention has deleted.
        const [newest, oldest] = [await lastSequence(app.db), await oldestSequence(app.db)];
        if (from > newest + 1)
          throw badRequest([{ field: 'from', maximum: `Must be at most ${newest + 1}: the newest event is ${newest}.` }], 'Request validation failed.');
        if (oldest !== undefined && from < oldest) {
          throw badRequest(
            [{ field: 'from', minimum: `Must be at least ${oldest}: older events are no longer kept (EVENTS_RETENTION_DAYS).` }],
            'Request validation failed.',
          );
        }
        cursor = from - 1;
      }
      const hook = await reviseWebhook(app.db, id, { active: status === 'active', cursor, batchSize });
      if (!hook) throw notFound('Webhook');
      app.webhookDeliverer.activate();
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
      summary: 'The delivery attempts of a webhook, newest first',
      description:
        'Every attempt (one POST), delivered or failed, with the events it carried, the answer or the error; newest first, paginated as every list (Link, X-Total-Count). Kept as long as events (EVENTS_RETENTION_DAYS).',
      params: WebhookParams,
      querystring: listQuerystring(deliveriesCollection),
      response: {
        200: Type.Array(Type.Ref(WebhookDelivery), { description: 'Attempts.', maxItems: 100, headers: LIST_HEADERS }),
        ...errors(400, ...AUTH_ERRORS, 404),
      },
    },
    handler: async (request, reply) => {
      // The query first: a bad parameter is 400 whether or not the webhook exists.
      const plan = listQuery(deliveriesCollection, request.url);
      const id = request.params.webhook_id;
      if (!(await findWebhook(app.db, id))) throw notFound('Webhook');
      const { rows, ...found } = await pageDeliveries(app.db, id, plan);
      setListHeaders(reply, `/webhooks/${id}/deliveries`, plan, found);
      return rows;
    },
  });
};
