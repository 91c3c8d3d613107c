// A minimal Server-Sent Events client for the tests: real HTTP (fetch), parsed as it arrives, and
// waits on what it received (never on time).

export interface SseEvent {
  id: string | undefined;
  data: { sequence: number; type: string; path: string; resource: Record<string, unknown>; id: string; at: string };
}

export interface SseClient {
  status: number;
  headers: Headers;
  events: SseEvent[];
  heartbeats: number;
  /** Resolves once `predicate` holds for what was received (checked after every chunk). */
  until(predicate: (c: SseClient) => boolean): Promise<void>;
  close(): void;
}

export async function openStream(url: string, token: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const waiters: { predicate: (c: SseClient) => boolean; resolve: () => void; reject: (e: Error) => void }[] = [];
  const client: SseClient = {
    status: res.status,
    headers: res.headers,
    events: [],
    heartbeats: 0,
    until(predicate) {
      if (predicate(client)) return Promise.resolve();
      return new Promise((resolve, reject) => waiters.push({ predicate, resolve, reject }));
    },
    close: () => abort.abort(),
  };
  const check = () => {
    for (const w of [...waiters]) {
      if (w.predicate(client)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  if (res.status !== 200 || !res.body) return client;
  void (async () => {
    const decoder = new TextDecoder();
    let text = '';
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          if (block === ': heartbeat') client.heartbeats++;
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (data) client.events.push({ id: /^id: (.*)$/m.exec(block)?.[1], data: JSON.parse(data.slice(6)) as SseEvent['data'] });
        }
        check();
      }
    } catch {
      // aborted by close()
    }
    for (const w of waiters.splice(0)) w.reject(new Error(`the stream ended after ${client.events.length} events`));
  })();
  return client;
}
