import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';

// A real webhook receiver for the tests: an HTTP server on 127.0.0.1 that records every delivery and
// answers as the test says; tests wait on what it received, never on time.

export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  event: { id: string; sequence: number; type: string; path: string; resource: Record<string, unknown>; at: string };
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

export async function startReceiver(): Promise<Receiver> {
  const waiters: { predicate: (r: Receiver) => boolean; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const delivery: Delivery = { headers: req.headers, body, event: JSON.parse(body) as Delivery['event'] };
      receiver.deliveries.push(delivery);
      receiver.answer(delivery, res);
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
export const sequencesSeen = (r: Receiver) => [...new Set(r.deliveries.map((d) => d.event.sequence))];
