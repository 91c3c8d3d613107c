import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, errorBody, type TestContext } from '../helpers.js';

let ctx: TestContext;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let doc: any;

beforeAll(async () => {
  ctx = await buildTestApp();
  doc = (await client(ctx.app).get('/openapi.json')).json();
});
afterAll(() => ctx.close());

const headerNames = (op: { parameters?: { in: string; name: string }[] }) =>
  (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());

describe('GET /openapi.json (lifecycle)', () => {
  it('describes the single album and song routes with PATCH and DELETE', () => {
    const album = doc.paths['/artists/{artist_id}/albums/{album_id}'];
    const song = doc.paths['/artists/{artist_id}/albums/{album_id}/songs/{song_id}'];
    for (const path of [doc.paths['/artists/{artist_id}'], album, song]) {
      expect(Object.keys(path).sort()).toEqual(['delete', 'get', 'head', 'patch']);
    }
    // The full Album, or (with fields=) the same properties, none of them required.
    expect(album.get.responses['200'].content['application/json'].schema.anyOf[0].$ref).toBe('#/components/schemas/Album');
    expect(song.patch.requestBody.content['application/json'].schema.minProperties).toBe(1);
    expect(Object.keys(song.delete.responses)).toContain('204');
  });

  it('documents ETag, If-None-Match and 304 on reads; If-Match and 412 on writes', () => {
    const paths = [
      '/artists/{artist_id}',
      '/artists/{artist_id}/albums',
      '/artists/{artist_id}/albums/{album_id}',
      '/artists/{artist_id}/albums/{album_id}/songs',
      '/users/{id}',
    ];
    for (const p of paths) {
      const get = doc.paths[p].get;
      expect(headerNames(get)).toContain('if-none-match');
      expect(get.responses['200'].headers.ETag).toBeDefined();
      expect(get.responses['304'].content).toBeUndefined();
    }
    for (const p of [
      '/artists/{artist_id}',
      '/artists/{artist_id}/albums/{album_id}',
      '/artists/{artist_id}/albums/{album_id}/songs/{song_id}',
      '/users/{id}',
    ]) {
      for (const method of ['patch', 'delete']) {
        expect(headerNames(doc.paths[p][method])).toContain('if-match');
        expect(doc.paths[p][method].responses['412'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorBody');
      }
      expect(doc.paths[p].patch.responses['200'].headers.ETag).toBeDefined();
    }
  });

  it('documents Idempotency-Key and 409 on the creating POSTs', () => {
    for (const p of ['/artists', '/artists/{artist_id}/albums', '/artists/{artist_id}/albums/{album_id}/songs', '/users']) {
      const post = doc.paths[p].post;
      const key = post.parameters.find((x: { name: string }) => x.name === 'idempotency-key');
      expect(key).toEqual(expect.objectContaining({ in: 'header', required: false }));
      expect(key.schema.maxLength).toBe(255);
      expect(post.responses['409']).toBeDefined();
    }
    expect(headerNames(doc.paths['/tokens'].post)).not.toContain('idempotency-key');
  });
});

describe('GET /openapi.json (conventions)', () => {
  // The 405 + Allow rule is a property of every path, not of one operation: what the document lists
  // for a path is exactly what the service takes there, and every other method is 405 with Allow.
  it('lists for each path exactly the methods the service takes: any other is 405 with those in Allow', async () => {
    const admin = client(ctx.app, ctx.tokens.admin);
    const checked: string[] = [];
    for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      const documented = Object.keys(item).map((m) => m.toUpperCase());
      const other = ['PUT', 'PATCH', 'DELETE', 'POST', 'GET'].find((m) => !documented.includes(m));
      if (!other) continue;
      const url = template.replace(/\{[^}]+\}/g, '1');
      const res = await admin.send(other as 'PUT', url, other === 'GET' || other === 'DELETE' ? undefined : {});
      const allow = [...new Set([...documented, ...(documented.includes('GET') ? ['HEAD'] : [])])].sort().join(', ');
      expect([url, other, res.statusCode, res.headers.allow]).toEqual([url, other, 405, allow]);
      expect(errorBody(res)).toEqual({ code: 'METHOD_NOT_ALLOWED', message: `Method ${other} is not allowed here; allowed: ${allow}.` });
      checked.push(template);
    }
    expect(checked).toEqual(
      expect.arrayContaining(['/artists', '/artists/{artist_id}', '/artists/{artist_id}/albums/{album_id}/songs/{song_id}', '/users/{id}']),
    );
  });
});
