import { request } from 'node:http';
import { randomBytes } from 'node:crypto';

// A steady write load over HTTP, as clients behind a load balancer would send it: `loops` clients,
// each sending one POST /artists after the other to the instances in turn. Every outcome is kept, so
// a test can count 503s, find the longest time without a successful write and check afterwards that
// every acknowledged write is in the database.

export interface Outcome {
  /** Unique per write: the artist's name, and its Idempotency-Key when retried. */
  name: string;
  /** The instance (its base URL) that answered, or failed to. */
  instance: string;
  /** HTTP status, or the network error code when no answer came. */
  status: number | string;
  id?: number;
  retryAfter?: string;
  body: string;
  start: number;
  end: number;
  /** The attempt number (1 = first) of this write. */
  attempt: number;
}

export interface Load {
  outcomes: Outcome[];
  /** Resolves once `done` is true of the outcomes so far (checked after every outcome). */
  until(done: (outcomes: Outcome[]) => boolean): Promise<void>;
  /** Stops the clients after their current request; resolves when all have stopped. */
  stop(): Promise<void>;
}

interface Answer {
  status: number | string;
  body: string;
  retryAfter?: string;
}

function post(base: string, path: string, token: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve) => {
    const payload = JSON.stringify(body);
    // A connection per request (agent: false): a refused connection is a request the instance never
    // accepted, and nothing is left waiting on a kept-alive socket of an instance that is gone.
    const req = request(
      `${base}${path}`,
      {
        method: 'POST',
        agent: false,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, retryAfter: res.headers['retry-after'] }));
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? err.message, body: text }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? err.message, body: '' }));
    req.end(payload);
  });
}

export function writeLoad(options: {
  /** The instances in rotation now (read before each request). */
  targets: () => string[];
  loops: number;
  token: string;
  /**
   * Retry a write that got no answer (connection refused or reset) on the next instance with the
   * same Idempotency-Key, as a load balancer or client would: it is then stored exactly once.
   */
  retryUnanswered?: boolean;
}): Load {
  const run = randomBytes(3).toString('hex');
  const outcomes: Outcome[] = [];
  const waiters: { done: (o: Outcome[]) => boolean; resolve: () => void }[] = [];
  let stopping = false;
  let turn = 0;
  const record = (o: Outcome) => {
    outcomes.push(o);
    for (const w of [...waiters]) {
      if (w.done(outcomes)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const loop = async (client: number) => {
    for (let seq = 0; !stopping; seq++) {
      const name = `load-${run}-${client}-${seq}`;
      for (let attempt = 1; ; attempt++) {
        const targets = options.targets();
        const instance = targets[turn++ % targets.length]!;
        const start = performance.now();
        const headers: Record<string, string> = options.retryUnanswered ? { 'idempotency-key': name } : {};
        const answer = await post(instance, '/artists', options.token, { name, image: `https://img.example.com/${name}.jpg` }, headers);
        const id = answer.status === 201 ? (JSON.parse(answer.body) as { id: number }).id : undefined;
        record({ name, instance, status: answer.status, id, retryAfter: answer.retryAfter, body: answer.body, start, end: performance.now(), attempt });
        if (typeof answer.status === 'number' || !options.retryUnanswered) break;
      }
    }
  };
  const loops = Array.from({ length: options.loops }, (_, i) => loop(i));
  return {
    outcomes,
    until: (done) =>
      new Promise((resolve) => {
        if (done(outcomes)) resolve();
        else waiters.push({ done, resolve });
      }),
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** The longest time (ms) between two consecutive successful writes, and when it started. */
export function longestGap(outcomes: Outcome[]): { ms: number; from: number } {
  const ends = outcomes
    .filter((o) => o.status === 201)
    .map((o) => o.end)
    .sort((a, b) => a - b);
  let best = { ms: 0, from: 0 };
  for (let i = 1; i < ends.length; i++) if (ends[i]! - ends[i - 1]! > best.ms) best = { ms: ends[i]! - ends[i - 1]!, from: ends[i - 1]! };
  return best;
}
