import { createHmac } from 'node:crypto';
import type { EventRow } from '../events/events.repository.js';

// Deliveries are signed as Stripe's are: `X-Catalogue-Signature: t=<unix seconds>,v1=<hex>` where
// hex = HMAC-SHA256(secret, `${t}.${body}`). The timestamp is inside the MAC so an old delivery
// replayed later is recognised (receivers should refuse t too far from their clock). A batch is
// signed the same way: the MAC covers the whole body, every event in it.

export const SIGNATURE_HEADER = 'X-Catalogue-Signature';

export function signature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The headers of one POST: one event (batch size 1), or a batch of `events` in order. */
export function deliveryHeaders(secret: string, timestamp: number, body: string, events: readonly EventRow[], batched: boolean): Record<string, string> {
  const first = events[0]!;
  if (!batched) {
    return {
      [SIGNATURE_HEADER]: signature(secret, timestamp, body),
      'X-Catalogue-Event': first.type,
      'X-Catalogue-Sequence': String(first.sequence),
      'X-Catalogue-Event-Id': first.id,
    };
  }
  return {
    [SIGNATURE_HEADER]: signature(secret, timestamp, body),
    'X-Catalogue-Batch': String(events.length),
    'X-Catalogue-First-Sequence': String(first.sequence),
    'X-Catalogue-Last-Sequence': String(events.at(-1)!.sequence),
  };
}

export const SIGNATURE_DESCRIPTION = `Each delivery is a POST (\`Content-Type: application/json\`), one at a time and in sequence order per webhook. With \`batch_size\` 1 (the default) it carries one Event (the JSON of GET /events) with \`X-Catalogue-Event\` (the type), \`X-Catalogue-Sequence\` and \`X-Catalogue-Event-Id\`; with a larger \`batch_size\` it carries \`{"events": [Event, ...]}\` (1 to batch_size events, in sequence order: whatever has come since the previous POST) with \`X-Catalogue-Batch\` (how many), \`X-Catalogue-First-Sequence\` and \`X-Catalogue-Last-Sequence\`. Either way:

- \`${SIGNATURE_HEADER}: t=<unix seconds>,v1=<hex>\`: hex is HMAC-SHA256 keyed with the webhook's secret over \`<t>.<raw body>\` (the whole body: every event of a batch). To verify: recompute it over the body bytes as received, compare in constant time, and refuse a \`t\` far from your clock (replays).

Any 2xx answer acknowledges every event of the POST. Anything else, or no answer within WEBHOOK_TIMEOUT_MS, is retried (from the same first event) after WEBHOOK_RETRY_BASE_MS, doubling each time (at most an hour); after WEBHOOK_MAX_ATTEMPTS failures in a row the webhook is marked \`failing\` and deliveries stop until \`PATCH /webhooks/{id}\` with \`{"status": "active"}\` resumes them where they stopped. Delivery is at least once: events whose acknowledgement was not yet recorded when the service stopped are sent again, so deduplicate by \`sequence\` (or the event \`id\`). Several instances never send to one webhook at the same time, and a receiver that is slow or never answers holds up only its own webhook.`;
