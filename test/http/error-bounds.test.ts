import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ERROR_DETAILS, MAX_ERROR_TEXT } from '../../src/errors/codes.js';
import { buildTestApp, client, errorBody, type TestContext } from '../helpers.js';

// The error body carries bounds in the document (maxItems, maxLength: OWASP API4) and keeps them: a
// request naming many or huge unknown fields gets a bounded answer, never one larger than the limits say.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await buildTestApp();
});
afterAll(() => ctx.close());

describe('the error body stays within its documented bounds', () => {
  it('lists at most MAX_ERROR_DETAILS failed rules for a body with 1,500 unknown fields (400, still refused)', async () => {
    const body: Record<string, unknown> = { name: 'X', image: 'https://img.example.com/x.jpg' };
    for (let i = 0; i < 1500; i++) body[`unknown_${i}`] = i;
    // client() checks the answer against the served document: maxItems included.
    const res = await client(ctx.app, ctx.tokens.write).post('/artists', body);
    expect(res.statusCode).toBe(400);
    const { code, details } = errorBody(res);
    expect(code).toBe('BAD_REQUEST');
    expect(details).toHaveLength(MAX_ERROR_DETAILS);
    expect(details![0]).toEqual({ field: 'unknown_0', unknown: expect.any(String) });
    expect((await client(ctx.app, ctx.tokens.read).get('/artists')).headers['x-total-count']).toBe('0');
  });

  it('cuts an echoed field name longer than MAX_ERROR_TEXT characters (code points, not UTF-16 units)', async () => {
    const long = '🎵'.repeat(MAX_ERROR_TEXT + 10);
    const res = await client(ctx.app, ctx.tokens.write).post('/artists', { name: 'X', image: 'https://img.example.com/x.jpg', [long]: 1 });
    expect(res.statusCode).toBe(400);
    const { details } = errorBody(res);
    expect(details).toEqual([{ field: '🎵'.repeat(MAX_ERROR_TEXT), unknown: expect.any(String) }]);
  });
});
