import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, type TestContext } from '../helpers.js';
import { derivedOperationId } from '../../src/docs/openapi.transform.js';

let ctx: TestContext;
type Doc = {
  paths: Record<string, Record<string, { operationId?: string; responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>>;
};
let doc: Doc;

beforeAll(async () => {
  ctx = await buildTestApp();
  doc = (await client(ctx.app).get('/openapi.json')).json<Doc>();
});
afterAll(() => ctx.close());

const operations = () => Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

describe('GET /openapi.json (completeness)', () => {
  it('gives every operation a unique operationId', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths['/artists/{artist_id}']!.get!.operationId).toBe('getArtist');
  });

  it('documents X-Request-Id on every response, Location on 201, WWW-Authenticate on 401, Retry-After on 429', () => {
    for (const { op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.headers).toHaveProperty('X-Request-Id');
        expect(response.description).not.toBe('Default Response');
        if (status === '201') expect(response.headers).toHaveProperty('Location');
        if (status === '401') expect(response.headers).toHaveProperty('WWW-Authenticate');
        if (status === '429') expect(response.headers).toHaveProperty('Retry-After');
      }
    }
  });
});

describe('GET /openapi.json (license and version)', () => {
  const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

  it('names the license the repository carries (MIT), not UNLICENSED', async () => {
    const { info } = (await client(ctx.app).get('/openapi.json')).json<{ info: { license: { name: string; identifier: string } } }>();
    expect(info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(read('LICENSE')).toMatch(/^MIT License\n/);
    expect((JSON.parse(read('package.json')) as { license: string }).license).toBe('MIT');
  });

  it('gives info.version as MAJOR.MINOR.PATCH, the latest release of the CHANGELOG (docs/versioning.md)', async () => {
    const { info } = (await client(ctx.app).get('/openapi.json')).json<{ info: { version: string } }>();
    expect(info.version).toMatch(/^[1-9]\d*\.\d+\.\d+$/);
    const released = /^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/m.exec(read('CHANGELOG.md'));
    expect(released?.[1]).toBe(info.version);
    expect(read('docs/versioning.md')).toMatch(/Deprecation[\s\S]*RFC 9745[\s\S]*Sunset[\s\S]*RFC 8594/);
  });
});

describe('a sort without a direction', () => {
  it('is documented as ascending, and answers exactly what field:asc does', async () => {
    const full = (await client(ctx.app).get('/openapi.json')).json<{
      paths: Record<string, { get: { parameters: { name: string; in: string; description?: string }[] } }>;
    }>();
    const sort = full.paths['/artists']!.get.parameters.find((p) => p.in === 'query' && p.name === 'sort');
    expect(sort?.description).toContain('a field without a direction is asc');
    const api = client(ctx.app, ctx.tokens.admin);
    for (const name of ['b', 'A', 'c']) expect((await api.post('/artists', { name, image: 'https://img.example.com/x.jpg' })).statusCode).toBe(201);
    const bare = await api.get('/artists?sort=name');
    const asc = await api.get('/artists?sort=name:asc');
    expect(bare.statusCode).toBe(200);
    expect(bare.json<{ name: string }[]>().map((a) => a.name)).toEqual(['A', 'b', 'c']);
    expect(bare.body).toBe(asc.body);
  });
});

describe('derivedOperationId', () => {
  it('names a route without an explicit id from its method and path', () => {
    expect(derivedOperationId('get', '/artists/{artist_id}/albums')).toBe('getArtistsByArtistIdAlbums');
    expect(derivedOperationId('put', '/aliases/{collection}/{name}')).toBe('putAliasesByCollectionByName');
  });
});

describe('GET /docs', () => {
  it('lists each GET once (no HEAD rows) and says once that every GET answers HEAD; shows the MIT license', async () => {
    const shown = (await client(ctx.app).get('/docs/json')).json<{
      info: { description: string; license: { name: string } };
      paths: Record<string, Record<string, unknown>>;
    }>();
    const methods = Object.values(shown.paths).flatMap((item) => Object.keys(item));
    expect(methods).toContain('get');
    expect(methods).not.toContain('head');
    expect(shown.info.description.match(/answers `HEAD`/g)).toHaveLength(1);
    expect(shown.info.license.name).toBe('MIT');
    // The document itself keeps them: tools and clients see every operation.
    expect(doc.paths['/artists/{artist_id}']).toHaveProperty('head');
  });

  it("shows the service's own name as title and logo, not the framework's logo", async () => {
    const page = await client(ctx.app).get('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<title>music-catalogue API</title>');
    const init = await client(ctx.app).get('/docs/static/swagger-initializer.js');
    expect(init.statusCode).toBe(200);
    const logo = /img\.src = 'data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)'/.exec(init.body);
    expect(logo).not.toBeNull();
    const svg = Buffer.from(logo![1]!, 'base64').toString('utf8');
    expect(svg).toContain('>music-catalogue</text>');
    expect(svg).not.toContain('fastify');
  });
});
