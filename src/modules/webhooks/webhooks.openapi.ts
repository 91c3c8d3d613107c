import type { OpenAPIV3_1 } from 'openapi-types';
import { SIGNATURE_DESCRIPTION, SIGNATURE_HEADER } from './webhooks.signature.js';
import { BATCH_MAX } from './webhooks.schemas.js';

const signatureParameter = {
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
} as const;

const sequenceHeader = (name: string, description: string) =>
  ({ name, in: 'header', required: true, description, schema: { type: 'string', maxLength: 16, pattern: '^[0-9]+$' } }) as const;

// The receiver's answer: only its status matters (any 2xx acknowledges; anything else, or none
// within WEBHOOK_TIMEOUT_MS, is retried), so no 2xx entry with the service's own headers.
const responses = {
  default: {
    description:
      'Any 2xx acknowledges what the POST carried and the next POST follows; any other answer, or none in time, sends the same events again later (backoff).',
  },
};

/** The OpenAPI 3.1 `webhooks` entries: what the service POSTs to a subscribed URL. */
export const WEBHOOKS_DOCUMENT: Record<string, OpenAPIV3_1.PathItemObject> = {
  catalogueEvent: {
    post: {
      operationId: 'receiveCatalogueEvent',
      summary: 'One event delivered to a webhook (batch_size 1)',
      description: SIGNATURE_DESCRIPTION,
      tags: ['webhooks'],
      security: [],
      parameters: [
        signatureParameter,
        { name: 'X-Catalogue-Event', in: 'header', required: true, description: 'The event type.', schema: { type: 'string', maxLength: 20 } },
        sequenceHeader('X-Catalogue-Sequence', 'The event sequence.'),
        { name: 'X-Catalogue-Event-Id', in: 'header', required: true, description: 'The event id.', schema: { type: 'string', maxLength: 32 } },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' } } } },
      responses,
    },
  },
  catalogueEventBatch: {
    post: {
      operationId: 'receiveCatalogueEventBatch',
      summary: 'Events delivered to a webhook together (batch_size 2 or more)',
      description: SIGNATURE_DESCRIPTION,
      tags: ['webhooks'],
      security: [],
      parameters: [
        signatureParameter,
        {
          name: 'X-Catalogue-Batch',
          in: 'header',
          required: true,
          description: 'How many events the body holds.',
          schema: { type: 'string', maxLength: 4, pattern: '^[0-9]+$' },
        },
        sequenceHeader('X-Catalogue-First-Sequence', 'The sequence of the first event in the body.'),
        sequenceHeader('X-Catalogue-Last-Sequence', 'The sequence of the last event in the body.'),
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['events'],
              additionalProperties: false,
              properties: {
                events: {
                  type: 'array',
                  minItems: 1,
                  maxItems: BATCH_MAX,
                  description: 'In sequence order; at most the webhook’s batch_size.',
                  items: { $ref: '#/components/schemas/Event' },
                },
              },
            },
          },
        },
      },
      responses,
    },
  },
};
