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
const env = { DATABASE_URL: `sqlite:${dbFile}`, CATALOGUE_ADMIN_TOKEN: TOKEN, RATE_LIMIT_PER_MINUTE: '0' };

const keepAlive = new Agent({ keepAlive: true, keepAliveMsecs: 30_000, timeout: 30_000 });
afterAll(() => keepAlive.destroy());

interface InFlight {
  /** Resolves once the server has read the request headers (it answered 100 Continue). */
  received: Promise<void>;
  /** Sends the body, in pieces over spreadMs, and resolves with the response. */
  finish(spreadMs: number): Promise<{ status: number; body: string }>;
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
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
  const received = new Promise<void>((resolve) => req.once('continue', () => resolve()));
  req.flushHeaders();
  return {
    received,
    async finish(spreadMs) {
      const pieces = payload.match(/.{1,8}/g)!;
      for (const [i, piece] of pieces.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, spreadMs / pieces.length));
        if (i === pieces.length - 1) req.end(piece);
        else req.write(piece);
      }
      return response;
    },
  };
}

/** Resolves true once a new TCP connection to the port is refused (polling), false if it never is. */
async function refusesConnections(port: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(false)));
      socket.once('error', () => resolve(true));
    });
    if (refused) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe('graceful shutdown (SIGTERM)', () => {
  it('stops accepting, finishes every in-flight request with 2xx, closes the database and exits 0', async () => {
    const srv = await startServerProcess(env);
    const inFlight = Array.from({ length: 24 }, (_, i) => startPost(srv.url, `in flight ${i}`));
    await Promise.all(inFlight.map((r) => r.received));

    srv.child.kill('SIGTERM');
    // New connections are refused while the requests in flight are still open.
    expect(await refusesConnections(Number(new URL(srv.url).port), 5_000)).toBe(true);
    expect(srv.child.exitCode).toBeNull();

    // Half the bodies arrive at once, half slowly over a second.
    const results = await Promise.all(inFlight.map((r, i) => r.finish(i % 2 === 0 ? 0 : 1_000)));
    const lastResponseAt = Date.now();
    for (const r of results) expect(r.status, r.body).toBe(201);
    expect(await srv.exited).toBe(0);
    // Finished keep-alive connections do not hold the shutdown up.
    expect(Date.now() - lastResponseAt).toBeLessThan(2_000);
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
  }, 60_000);
});
