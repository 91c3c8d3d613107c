import type { OpenAPIV3_1 } from 'openapi-types';
import { SIGNATURE_DESCRIPTION, SIGNATURE_HEADER } from './webhooks.signature.js';

/** The OpenAPI 3.1 `webhooks` entry: what the service POSTs to a subscribed URL. */
export const WEBHOOKS_DOCUMENT: Record<string, OpenAPIV3_1.PathItemObject> = {
  catalogueEvent: {
    post: {
      operationId: 'receiveCatalogueEvent',
      summary: 'One event delivered to a webhook',
      description: SIGNATURE_DESCRIPTION,
      tags: ['webhooks'],
      security: [],
      parameters: [
        {
          name: SIGNATURE_HEADER,
          in: 'header',
          required: true,
          description: '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.',
          schema: {
            type: 'string',
            maxLength: 100,
            pattern: '^t=[0-9]+,v1=[0-9a-f]{64}$',
            examples: ['t=1795528800,v1=5d41402abc4b2a76b9719d911017c592ae0f3b5f0f8e1a2c3d4e5f6a7b8c9d0e'],
          },
        },
        { name: 'X-Catalogue-Event', in: 'header', required: true, description: 'The event type.', schema: { type: 'string', maxLength: 20 } },
        {
          name: 'X-Catalogue-Sequence',
          in: 'header',
          required: true,
          description: 'The event sequence.',
          schema: { type: 'string', maxLength: 16, pattern: '^[0-9]+$' },
        },
        { name: 'X-Catalogue-Event-Id', in: 'header', required: true, description: 'The event id.', schema: { type: 'string', maxLength: 32 } },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' } } } },
      // The receiver's answer: only its status matters (any 2xx acknowledges; anything else, or none
      // within WEBHOOK_TIMEOUT_MS, is retried), so no 2xx entry with the service's own headers.
      responses: {
        default: {
          description:
            'Any 2xx acknowledges the event and the next one follows; any other answer, or none in time, sends the same event again later (backoff).',
        },
      },
    },
  },
};
