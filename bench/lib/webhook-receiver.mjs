// The webhook phase's receiver (issue 34): what an integration runs. It verifies every POST's
// signature over the raw body (docs/events.md), counts the events it is given for the first time
// (deliveries come in sequence order, so a sequence not above the highest seen is a resend), and
// answers 204. GET /stats says what it has seen; POST /reset starts counting again.
// Usage: node bench/lib/webhook-receiver.mjs <secret>   (PORT from the environment)
import http from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';

const secret = process.argv[2];
let stats;
const reset = () => (stats = { posts: 0, events: 0, resent: 0, badSignatures: 0, maxSequence: 0, firstAt: 0, lastAt: 0 });
reset();

function verified(header, body) {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(match[2], 'hex'));
}

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
      if (req.url === '/reset') {
        reset();
        return res.writeHead(204).end();
      }
      const body = Buffer.concat(chunks);
      if (!verified(req.headers['x-catalogue-signature'], body)) {
        stats.badSignatures++;
        return res.writeHead(401).end();
      }
      const parsed = JSON.parse(body.toString('utf8'));
      const now = performance.now();
      stats.posts++;
      stats.firstAt ||= now;
      stats.lastAt = now;
      for (const event of parsed.events ?? [parsed]) {
        if (event.sequence > stats.maxSequence) {
          stats.maxSequence = event.sequence;
          stats.events++;
        } else stats.resent++;
      }
      res.writeHead(204).end();
    });
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
