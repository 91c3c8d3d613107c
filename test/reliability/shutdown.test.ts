import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerProcess } from '../process.js';

const dir = mkdtempSync(join(tmpdir(), 'mc-shutdown-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'shutdown-test-admin-token-012345';
const dbFile = join(dir, 'catalogue.db');
const env = {
  DATABASE_URL: `sqlite:${dbFile}`,
  CATALOGUE_ADMIN_TOKEN: TOKEN,
  RATE_LIMIT_PER_MINUTE: '0',
  // Neither limit may be what ends the shutdown here: idle keep-alive connections would stay open
  // for 10 minutes, and the drain has as long as a loaded machine needs (a hung drain still fails,
  // with "shutdown timed out" and exit code 1, before the test's own timeout).
  KEEP_ALIVE_TIMEOUT_MS: '600000',
  SHUTDOWN_TIMEOUT_MS: '60000',
};

const keepAlive = new Agent({ keepAlive: true, keepAliveMsecs: 30_000, timeout: 30_000 });
afterAll(() => keepAlive.destroy());

interface Answer {
  status: number;
  connection: string | undefined;
  body: string;
}

interface InFlight {
  /** Resolves once the server has read the request headers (it answered 100 Continue). */
  received: Promise<void>;
  /** Sends the first half of the body. */
  start(): void;
  /** Sends the rest of the body and resolves with the response. */
  finish(): Promise<Answer>;
}

/**
 * Starts a POST /artists with `Expect: 100-continue`: the server's 100 Continue proves it has the
 * request in hand, and the body (the rest of the request) is sent only when the test says so.
 */
function startPost(url: string, name: string): InFlight {
  const payload = JSON.stringify({ name, image: 'https://img.example.com/in-flight.jpg' });
  const req = request(`${url}/artists`, {
    method: 'POST',
    // Keep-alive, as real clients do: a finished connection must not hold the shutdown up.
    agent: keepAlive,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      expect: '100-continue',
    },
  });
  const response = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
  });
  const received = new Promise<void>((resolve) => req.once('continue', () => resolve()));
  req.flushHeaders();
  const half = Math.floor(payload.length / 2);
  let started = false;
  return {
    received,
    start() {
      started = true;
      req.write(payload.slice(0, half));
    },
    finish() {
      req.end(started ? payload.slice(half) : payload);
      return response;
    },
  };
}

/**
 * Resolves once a new TCP connection to the port is refused, trying again after each accepted one
 * (the test's timeout is the only bound: the server must get there, however loaded the machine).
 */
async function refusesConnections(port: number): Promise<void> {
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(false)));
      socket.once('error', () => resolve(true));
    });
    if (refused) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('graceful shutdown (SIGTERM)', () => {
  it('stops accepting, finishes every in-flight request with 2xx, closes the database and exits 0', async () => {
    const srv = await startServerProcess(env);
    const inFlight = Array.from({ length: 24 }, (_, i) => startPost(srv.url, `in flight ${i}`));
    await Promise.all(inFlight.map((r) => r.received));

    srv.child.kill('SIGTERM');
    // New connections are refused while the requests in flight are still open.
    await refusesConnections(Number(new URL(srv.url).port));
    expect(srv.child.exitCode).toBeNull();

    // Half the requests get half their body now, and the rest only after the server has answered
    // all the other half: the server keeps reading bodies that are still arriving while it drains.
    const slow = inFlight.filter((_, i) => i % 2 === 1);
    for (const r of slow) r.start();
    const quick = await Promise.all(inFlight.filter((_, i) => i % 2 === 0).map((r) => r.finish()));
    expect(srv.child.exitCode).toBeNull();
    const results = [...quick, ...(await Promise.all(slow.map((r) => r.finish())))];
    for (const r of results) {
      expect(r.status, r.body).toBe(201);
      // Draining: each connection is closed after its answer instead of being kept alive.
      expect(r.connection).toBe('close');
    }
    // The keep-alive connections, idle for up to 10 minutes otherwise, do not hold the exit up.
    expect(await srv.exited).toBe(0);
    expect(srv.stderr()).not.toMatch(/timed out|error/i);

    // A clean close checkpoints the write-ahead log into the database file and removes it.
    expect(!existsSync(`${dbFile}-wal`) || statSync(`${dbFile}-wal`).size === 0).toBe(true);

    const again = await startServerProcess(env);
    try {
      for (const r of results) {
        const { id, name } = JSON.parse(r.body) as { id: number; name: string };
        const res = await fetch(`${again.url}/artists/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { name: string }).name).toBe(name);
      }
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  }, 120_000);
});
