import { createHmac } from 'node:crypto';

// Deliveries are signed as Stripe's are: `X-Catalogue-Signature: t=<unix seconds>,v1=<hex>` where
// hex = HMAC-SHA256(secret, `${t}.${body}`). The timestamp is inside the MAC so an old delivery
// replayed later is recognised (receivers should refuse t too far from their clock).

export const SIGNATURE_HEADER = 'X-Catalogue-Signature';

export function signature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export const SIGNATURE_DESCRIPTION = `Each delivery is a POST of one Event (the JSON of GET /events, \`Content-Type: application/json\`), one at a time and in sequence order per webhook, with:

- \`${SIGNATURE_HEADER}: t=<unix seconds>,v1=<hex>\`: hex is HMAC-SHA256 keyed with the webhook's secret over \`<t>.<raw body>\`. To verify: recompute it over the body bytes as received, compare in constant time, and refuse a \`t\` far from your clock (replays).
- \`X-Catalogue-Event\` (the type), \`X-Catalogue-Sequence\`, \`X-Catalogue-Event-Id\`.

Any 2xx answer acknowledges the event. Anything else, or no answer within WEBHOOK_TIMEOUT_MS, is retried after WEBHOOK_RETRY_BASE_MS, doubling each time (at most an hour); after WEBHOOK_MAX_ATTEMPTS failures in a row the webhook is marked \`failing\` and deliveries stop. Delivery is at least once: an event whose acknowledgement was not yet recorded when the service stopped is sent again, so deduplicate by \`sequence\` (or the event \`id\`). Several instances never send to one webhook at the same time.`;
