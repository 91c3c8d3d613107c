import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'up' | 'down' | 'blackhole';

/**
 * A TCP proxy in front of the PostgreSQL server that a test can cut: `down` resets every open
 * connection and every new one (the server is gone), `blackhole` accepts connections and never
 * answers (a network that drops packets), `up` forwards again.
 */
export interface Proxy {
  port: number;
  set(mode: ProxyMode): void;
  /** Resolves once `n` more connections have been attempted through the proxy (refused ones included). */
  attempts(n: number): Promise<void>;
  close(): Promise<void>;
}

/** `fromClient`: called for each connection forwarded; what it returns sees every chunk that client sends the server. */
export async function startProxy(targetHost: string, targetPort: number, options: { fromClient?: () => (chunk: Buffer) => void } = {}): Promise<Proxy> {
  let mode: ProxyMode = 'up';
  const open = new Set<Socket>();
  const track = (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => s.destroy());
  };
  let attempted = 0;
  const waiting: { at: number; resolve: () => void }[] = [];
  const server: Server = createServer((client) => {
    attempted++;
    for (const w of [...waiting]) {
      if (attempted < w.at) continue;
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
    track(client);
    if (mode === 'down') return void client.resetAndDestroy();
    if (mode === 'blackhole') return; // held open, never forwarded
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track(upstream);
    if (options.fromClient) client.on('data', options.fromClient());
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    set(next) {
      mode = next;
      if (next !== 'up') for (const s of open) s.destroy();
    },
    attempts(n) {
      return new Promise((resolve) => waiting.push({ at: attempted + n, resolve }));
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
