import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';

// A real webhook receiver for the tests: an HTTP server on 127.0.0.1 that records every delivery and
// answers as the test says; tests wait on what it received, never on time. Given the secret, it
// verifies every delivery's signature as a receiver would, and answers 401 to one that fails.

export interface CatalogueEvent {
  id: string;
  sequence: number;
  type: string;
  path: string;
  resource: Record<string, unknown>;
  at: string;
}

export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  /** What the POST carried: one event, or a batch's events in order. */
  events: CatalogueEvent[];
  /** The first (for one-event POSTs, the only) event. */
  event: CatalogueEvent;
  /** A batch (`{"events": [...]}`) rather than one event. */
  batch: boolean;
  /** The signature checked against the receiver's secret (undefined when it was given none). */
  verified?: boolean;
  /** The answer, while it is held open by the test. */
  res: ServerResponse;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** How to answer a delivery (default 204); `res` may be held unanswered. */
  answer: (d: Delivery, res: ServerResponse) => void;
  until(predicate: (r: Receiver) => boolean): Promise<void>;
  close(): Promise<void>;
}

/** Checks X-Catalogue-Signature as a receiver would (docs: POST /webhooks). */
export function verifySignature(secret: string, header: string | undefined, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'));
}

export async function startReceiver(options: { secret?: string } = {}): Promise<Receiver> {
  const waiters: { predicate: (r: Receiver) => boolean; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const parsed = JSON.parse(body) as CatalogueEvent | { events: CatalogueEvent[] };
      const batch = 'events' in parsed;
      const events = 'events' in parsed ? parsed.events : [parsed];
      const verified = options.secret === undefined ? undefined : verifySignature(options.secret, req.headers['x-catalogue-signature'] as string, body);
      const delivery: Delivery = { headers: req.headers, body, events, event: events[0]!, batch, verified, res };
      receiver.deliveries.push(delivery);
      if (verified === false) res.writeHead(401).end();
      else receiver.answer(delivery, res);
      for (const w of [...waiters]) {
        if (w.predicate(receiver)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const receiver: Receiver = {
    url: `http://127.0.0.1:${address.port}/hook`,
    deliveries: [],
    answer: (_d, res) => res.writeHead(204).end(),
    until(predicate) {
      if (predicate(receiver)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** The sequences a receiver acknowledged or saw, deduplicated, in order of first arrival. */
export const sequencesSeen = (r: Receiver) => [...new Set(r.deliveries.flatMap((d) => d.events.map((e) => e.sequence)))];
