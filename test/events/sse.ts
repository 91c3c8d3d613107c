import { request, type IncomingMessage } from 'node:http';

// A minimal Server-Sent Events client for the tests: real HTTP, parsed as it arrives, and waits on
// what it received (never on time).

export interface SseEvent {
  id: string | undefined;
  data: { sequence: number; type: string; path: string; resource: Record<string, unknown>; id: string; at: string };
}

export interface SseClient {
  status: number;
  headers: Headers;
  events: SseEvent[];
  heartbeats: number;
  /**
   * Resolves once `predicate` holds for what was received (checked after every chunk). Rejects when the
   * stream ends first (or has ended already), and, as a diagnostic only, after UNTIL_LIMIT_MS, saying
   * what arrived: a hang fails with what the stream saw instead of at the suite's timeout, silently.
   */
  until(predicate: (c: SseClient) => boolean): Promise<void>;
  /** Resolves when the stream has ended: the server closed it, or close() was called. */
  ended: Promise<void>;
  close(): void;
}

/** Far above any wait a test has (a few seconds under load): a diagnostic, never what makes a test pass. */
const UNTIL_LIMIT_MS = 60_000;

/** What a client received, for a failure's message: counts and the last sequences. */
function describe(c: SseClient, end: string | undefined): string {
  const last = c.events.slice(-5).map((e) => e.data.sequence);
  return `${c.events.length} events (last sequences: ${last.join(', ') || 'none'}), ${c.heartbeats} heartbeats, stream ${end ?? 'open'}`;
}

export async function openStream(url: string, token: string, headers: Record<string, string> = {}): Promise<SseClient> {
  // node:http on a connection of its own, not fetch: fetch's pool may open a spare connection that
  // never sends a request, and a server's close waits for such a connection (Node counts it as busy).
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, { agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers } }, resolve);
    req.once('error', reject);
    req.end();
  });
  const waiters: { predicate: (c: SseClient) => boolean; resolve: () => void; reject: (e: Error) => void }[] = [];
  let ended!: () => void;
  /** How the stream ended (for a failure's message); undefined while it is open. */
  let end: string | undefined;
  let closed = false;
  const received = new Headers();
  for (const [name, value] of Object.entries(res.headers)) for (const v of [value ?? []].flat()) received.append(name, v);
  const client: SseClient = {
    ended: new Promise<void>((resolve) => (ended = resolve)),
    status: res.statusCode!,
    headers: received,
    events: [],
    heartbeats: 0,
    until(predicate) {
      if (predicate(client)) return Promise.resolve();
      if (end !== undefined) return Promise.reject(new Error(`until: ${describe(client, end)}`));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`until: not met within ${UNTIL_LIMIT_MS} ms: ${describe(client, end)}`));
        }, UNTIL_LIMIT_MS).unref();
        const waiter = {
          predicate,
          resolve: () => (clearTimeout(timer), resolve()),
          reject: (e: Error) => (clearTimeout(timer), reject(e)),
        };
        waiters.push(waiter);
      });
    },
    close: () => {
      closed = true;
      res.destroy();
    },
  };
  const check = () => {
    for (const w of [...waiters]) {
      if (w.predicate(client)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  if (res.statusCode !== 200) {
    res.destroy();
    end = `refused (${res.statusCode})`;
    ended();
    return client;
  }
  void (async () => {
    const decoder = new TextDecoder();
    let text = '';
    try {
      for await (const chunk of res as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        let blockEnd: number;
        while ((blockEnd = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, blockEnd);
          text = text.slice(blockEnd + 2);
          if (block === ': heartbeat') client.heartbeats++;
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (data) client.events.push({ id: /^id: (.*)$/m.exec(block)?.[1], data: JSON.parse(data.slice(6)) as SseEvent['data'] });
        }
        check();
      }
      end = closed ? 'closed by the test' : 'ended by the server';
    } catch (err) {
      end = closed ? 'closed by the test' : `failed: ${String(err)}`;
    }
    for (const w of waiters.splice(0)) w.reject(new Error(`until: ${describe(client, end)}`));
    ended();
  })();
  return client;
}
