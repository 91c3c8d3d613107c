import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { MAX_HEADER_BYTES, MAX_URL_LENGTH } from '../../src/http/limits.js';
import { buildTestApp, client, errorBody, type TestContext } from '../helpers.js';

let ctx: TestContext;
let port: number;

beforeAll(async () => {
  ctx = await buildTestApp({ requestTimeoutMs: 400, keepAliveTimeoutMs: 300 });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  port = (ctx.app.server.address() as { port: number }).port;
});
afterAll(() => ctx.close());

/**
 * Sends raw bytes and collects everything until the server closes the connection: that close is
 * what these tests wait for, however long a loaded machine takes to get there (the test's own
 * timeout is the only bound). `drip`, if given, is sent again every 100 ms until the close, as a
 * slow client would.
 */
function raw(request: string, drip?: string): Promise<{ text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let drips = 0;
    let dripping: NodeJS.Timeout | undefined;
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => {
      clearInterval(dripping);
      resolve({ text });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // The server may reset a connection it closes while the client is still writing to it.
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') reject(err);
    });
    socket.on('connect', () => {
      socket.write(request);
      if (drip !== undefined) {
        dripping = setInterval(() => {
          if (socket.destroyed || !socket.writable) return;
          socket.write(drip.replace('#', String(drips)));
          drips++;
        }, 100);
      }
    });
  });
}

function parse(text: string): { status: number; headers: string; body: unknown } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), headers: head.toLowerCase(), body: body ? JSON.parse(body) : undefined };
}

/** What every answer carries, including those written before Fastify routes the request. */
function expectRequestIdAndSecurityHeaders(headers: string) {
  expect(headers).toMatch(/^x-request-id: [0-9a-f-]{36}$/m);
  expect(headers).toContain("content-security-policy: default-src 'self'");
  expect(headers).toContain('x-content-type-options: nosniff');
  expect(headers).toContain('strict-transport-security: max-age=');
}

describe('body size limit', () => {
  it('answers 413 PAYLOAD_TOO_LARGE for a body over 1 MiB', async () => {
    const res = await client(ctx.app, ctx.tokens.write).post('/artists', { name: 'x'.repeat(1024 * 1024), image: 'https://a.example/a' });
    expect(res.statusCode).toBe(413);
    expect(errorBody(res)).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large.' });
  });
});

describe('URL length limit', () => {
  it(`answers 414 URI_TOO_LONG for a URL over ${MAX_URL_LENGTH} characters, before authentication`, async () => {
    const res = await client(ctx.app).get(`/artists?name=${'a'.repeat(MAX_URL_LENGTH)}`);
    expect(res.statusCode).toBe(414);
    expect(errorBody(res)).toEqual({
      code: 'URI_TOO_LONG',
      message: `The request URL is longer than ${MAX_URL_LENGTH} characters.`,
      details: [{ field: 'url', maxLength: `Must be at most ${MAX_URL_LENGTH} characters.` }],
    });
  });

  it('accepts a URL just under the limit and judges it normally', async () => {
    const res = await client(ctx.app).get(`/artists/1?x=${'a'.repeat(MAX_URL_LENGTH - 20)}`);
    expect(res.statusCode).toBe(401);
  });
});

describe('malformed or overlong paths', () => {
  it('answers 414 URI_TOO_LONG in the standard body for a path segment over the router limit', async () => {
    const res = await client(ctx.app, ctx.tokens.read).get(`/artists/${'9'.repeat(201)}`);
    expect(res.statusCode).toBe(414);
    expect(res.headers['x-request-id']).toBeDefined();
    expect(errorBody(res)).toEqual({
      code: 'URI_TOO_LONG',
      message: 'A path segment is too long.',
      details: [{ field: 'path', maxLength: 'A path segment is too long.' }],
    });
  });

  it('answers 400 BAD_REQUEST in the standard body for broken percent-encoding', async () => {
    const res = await client(ctx.app, ctx.tokens.read).get('/artists/%ZZ');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(errorBody(res)).toEqual({ code: 'BAD_REQUEST', message: 'Malformed URL.', details: [{ field: 'path', invalid: 'Invalid percent-encoding.' }] });
  });
});

describe('header size limit', () => {
  it(`answers 431 in the standard body when the request line and headers exceed ${MAX_HEADER_BYTES} bytes, and closes`, async () => {
    const res = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`);
    const { status, headers, body } = parse(res.text);
    expect(status).toBe(431);
    expect(headers).toContain('content-type: application/json; charset=utf-8');
    expect(body).toEqual({ code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', message: `The request line and headers exceed ${MAX_HEADER_BYTES} bytes.` });
    expectRequestIdAndSecurityHeaders(headers);
  });

  it('answers 400 in the standard body to bytes that are not HTTP', async () => {
    const res = await raw('HELLO THERE\r\n\r\n');
    expect(parse(res.text)).toMatchObject({ status: 400, body: { code: 'BAD_REQUEST', message: 'Malformed HTTP request.' } });
    expectRequestIdAndSecurityHeaders(parse(res.text).headers);
  });
});

describe('request timeout', () => {
  it('answers 408 and closes a connection whose body never finishes arriving', async () => {
    const res = await raw(
      `POST /artists HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ctx.tokens.write}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`,
    );
    // The body never completes, so only the server's timeout can have answered and closed.
    expect(parse(res.text)).toMatchObject({ status: 408, body: { code: 'REQUEST_TIMEOUT', message: 'The request was not received in time.' } });
    expectRequestIdAndSecurityHeaders(parse(res.text).headers);
    expect(parse(res.text).headers).toContain('connection: close');
    const artists = await client(ctx.app, ctx.tokens.read).get('/artists?size=1');
    expect(artists.headers['x-total-count']).toBe('0');
  });

  it('closes a connection that sends its headers slowly (slowloris), however long it keeps dripping', async () => {
    // A header line every 100 ms keeps the socket busy but never ends the headers: only the
    // server's limit on the time to receive them can close it.
    const res = await raw('GET /health HTTP/1.1\r\nHost: x\r\n', 'X-Drip-#: 1\r\n');
    expect(parse(res.text)).toMatchObject({ status: 408, body: { code: 'REQUEST_TIMEOUT', message: 'The request was not received in time.' } });
    expect(parse(res.text).headers).toContain('connection: close');
  });
});

describe('keep-alive timeout', () => {
  it('announces the timeout and closes an idle keep-alive connection after it', async () => {
    // The client sends one request and then stays idle without closing: the close is the server's.
    const res = await raw('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const { status, headers } = parse(res.text);
    expect(status).toBe(200);
    expect(headers).toContain('keep-alive: timeout=0');
    expect(headers).not.toContain('connection: close');
  });
});

describe('timeout configuration', () => {
  it('reads REQUEST_TIMEOUT_MS and KEEP_ALIVE_TIMEOUT_MS, with 30 s and 72 s by default', () => {
    expect(loadConfig({})).toMatchObject({ requestTimeoutMs: 30_000, keepAliveTimeoutMs: 72_000 });
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '5000', KEEP_ALIVE_TIMEOUT_MS: '65000' })).toMatchObject({ requestTimeoutMs: 5_000, keepAliveTimeoutMs: 65_000 });
  });

  it('refuses a timeout that is not a sensible number of milliseconds', () => {
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: 'soon' })).toThrow(/KEEP_ALIVE_TIMEOUT_MS must be an integer/);
  });
});
