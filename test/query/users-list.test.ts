import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, errorBody, type Client, type TestContext } from '../helpers.js';
import { byName, ids, links, seedUsers, type SeedUser } from './fixtures.js';
import { shapeStats } from '../../src/query/shapes.js';

let ctx: TestContext;
let api: Client;
let users: SeedUser[];
const idsOf = (pred: (u: SeedUser) => boolean) => users.filter(pred).map((u) => u.id);

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
  users = await seedUsers(api);
});
afterAll(() => ctx.close());

describe('GET /users: filters', () => {
  it('lists every user by id, with X-Total-Count', async () => {
    const res = await api.get('/users');
    expect(res.statusCode).toBe(200);
    expect(ids(res.json())).toEqual(users.map((u) => u.id));
    expect(res.json()[0]).toEqual(users[0]);
    expect(res.headers['x-total-count']).toBe(String(users.length));
  });

  it.each([
    ['status=inactive', (u: SeedUser) => u.status === 'inactive'],
    ['older_than=30', (u: SeedUser) => u.age > 30],
    ['younger_than=30', (u: SeedUser) => u.age < 30],
    ['lives_in=brazil', (u: SeedUser) => u.country.toLowerCase() === 'brazil'],
    ['lives_in=BRAZIL', (u: SeedUser) => u.country.toLowerCase() === 'brazil'],
    ['lives_in=[chile,argentina]', (u: SeedUser) => ['chile', 'argentina'].includes(u.country.toLowerCase())],
    ['lives_in=%5Bchile%2C%20Argentina%5D', (u: SeedUser) => ['chile', 'argentina'].includes(u.country.toLowerCase())],
    // A country named twice selects its users once (and counts them once: the total is summed from the summary).
    ['lives_in=[chile,CHILE,argentina]&status=active', (u: SeedUser) => ['chile', 'argentina'].includes(u.country.toLowerCase()) && u.status === 'active'],
    ['first_name=Ana', (u: SeedUser) => u.first_name === 'Ana'],
    ['first_name=ana', () => false],
    ['last_name=Souza', (u: SeedUser) => u.last_name === 'Souza'],
    [
      'status=active&older_than=18&younger_than=35&lives_in=brazil',
      (u: SeedUser) => u.status === 'active' && u.age > 18 && u.age < 35 && u.country.toLowerCase() === 'brazil',
    ],
    ['status=active&lives_in=argentina&older_than=60', (u: SeedUser) => u.status === 'active' && u.country.toLowerCase() === 'argentina' && u.age > 60],
    ['older_than=100', () => false],
  ])('%s selects exactly the matching users', async (query, pred) => {
    const res = await api.get(`/users?${query}`);
    expect(res.statusCode).toBe(200);
    expect(ids(res.json())).toEqual(idsOf(pred));
    expect(res.headers['x-total-count']).toBe(String(idsOf(pred).length));
  });
});

describe('GET /users: filters in any order', () => {
  it('answer alike in every order they are written, keep that order in the links, and are one list shape', async () => {
    const parts = ['status=active', 'older_than=20', 'younger_than=60', 'lives_in=[brazil,chile]'];
    const pred = (u: SeedUser) => u.status === 'active' && u.age > 20 && u.age < 60 && ['brazil', 'chile'].includes(u.country.toLowerCase());
    // The first order twice: the first ask reads what the next ones reuse (the held summary, page boundaries).
    const orders = [parts, parts, [...parts].reverse(), [parts[2], parts[0], parts[3], parts[1]]];
    let shapes: number | undefined;
    for (const order of orders) {
      const query = `${order.join('&')}&sort=last_name:desc&page=2&size=2`;
      const res = await api.get(`/users?${query}`);
      expect(res.statusCode).toBe(200);
      const all = users
        .filter(pred)
        .sort((a, b) => (a.last_name.toLowerCase() < b.last_name.toLowerCase() ? 1 : a.last_name.toLowerCase() > b.last_name.toLowerCase() ? -1 : a.id - b.id));
      expect(ids(res.json())).toEqual(all.slice(2, 4).map((u) => u.id));
      expect(res.headers['x-total-count']).toBe(String(all.length));
      expect(links(res.headers.link).first).toBe(`/users?${order.join('&')}&sort=last_name:desc&page=1&size=2`);
      // The statements of the list are built once for the filters, in whichever order they came.
      const now = shapeStats(ctx.app.db).shapes;
      if (order !== parts) expect(now).toBe(shapes);
      shapes = now;
    }
  });
});

describe('GET /users: sorting', () => {
  const byAgeDescThenId = () => [...users].sort((a, b) => b.age - a.age || a.id - b.id).map((u) => u.id);

  it('sort_by + order sorts by one field, ties by id ascending', async () => {
    const res = await api.get('/users?sort_by=age&order=desc');
    expect(ids(res.json())).toEqual(byAgeDescThenId());
  });

  it('order defaults to asc', async () => {
    const res = await api.get('/users?sort_by=age');
    expect(ids(res.json())).toEqual([...users].sort((a, b) => a.age - b.age || a.id - b.id).map((u) => u.id));
  });

  it('sorts strings a-to-z case-insensitively', async () => {
    const res = await api.get('/users?sort_by=first_name');
    const names = res.json<SeedUser[]>().map((u) => u.first_name);
    expect(names).toEqual(['Ana', 'Ana', 'bruno', 'Carla', 'Dan', 'eva', 'Felipe', 'Gil', 'Hugo']);
    expect(ids(res.json()).slice(0, 2)).toEqual([users[0]!.id, users[5]!.id]);
  });

  it('sort=f1:dir,f2:dir applies the keys in order', async () => {
    const res = await api.get('/users?sort=last_name:asc,age:desc');
    const expected = [...users]
      .sort((a, b) => a.last_name.toLowerCase().localeCompare(b.last_name.toLowerCase()) || b.age - a.age || a.id - b.id)
      .map((u) => u.id);
    expect(ids(res.json())).toEqual(expected);
  });

  it('sort with country desc and status', async () => {
    const res = await api.get('/users?sort=status:desc,country:desc');
    const expected = [...users].sort((a, b) => b.status.localeCompare(a.status) || byName(b.country, a.country) || a.id - b.id).map((u) => u.id);
    expect(ids(res.json())).toEqual(expected);
  });

  it('sorting by id desc reverses the list', async () => {
    const res = await api.get('/users?sort=id:desc');
    expect(ids(res.json())).toEqual(users.map((u) => u.id).reverse());
  });

  it('combines filters and sort', async () => {
    const res = await api.get('/users?status=active&older_than=18&sort=age:desc,first_name:asc');
    const expected = users.filter((u) => u.status === 'active' && u.age > 18).sort((a, b) => b.age - a.age || a.id - b.id);
    expect(ids(res.json())).toEqual(expected.map((u) => u.id));
  });
});

describe('GET /users: pagination', () => {
  it('page + size returns that page, with Link first/prev/next/last keeping filters and sort', async () => {
    const res = await api.get('/users?lives_in=brazil&sort=age:asc&page=2&size=2');
    const all = users.filter((u) => u.country.toLowerCase() === 'brazil').sort((a, b) => a.age - b.age || a.id - b.id);
    expect(ids(res.json())).toEqual(all.slice(2, 4).map((u) => u.id));
    expect(res.headers['x-total-count']).toBe(String(all.length));
    expect(links(res.headers.link)).toEqual({
      first: '/users?lives_in=brazil&sort=age:asc&page=1&size=2',
      prev: '/users?lives_in=brazil&sort=age:asc&page=1&size=2',
      next: '/users?lives_in=brazil&sort=age:asc&page=3&size=2',
      last: '/users?lives_in=brazil&sort=age:asc&page=3&size=2',
    });
  });

  it('omits prev on the first page and next on the last', async () => {
    const first = await api.get('/users?size=4');
    expect(Object.keys(links(first.headers.link))).toEqual(['first', 'next', 'last']);
    const last = await api.get('/users?size=4&page=3');
    expect(ids(last.json())).toEqual([users[8]!.id]);
    expect(Object.keys(links(last.headers.link))).toEqual(['first', 'prev', 'last']);
    expect(links(last.headers.link).last).toBe('/users?page=3&size=4');
  });

  it('defaults to page 1 with 20 per page', async () => {
    const res = await api.get('/users');
    expect(links(res.headers.link)).toEqual({ first: '/users?page=1&size=20', last: '/users?page=1&size=20' });
  });

  it('offset + limit', async () => {
    const res = await api.get('/users?offset=3&limit=2');
    expect(ids(res.json())).toEqual(users.slice(3, 5).map((u) => u.id));
    expect(res.headers['x-total-count']).toBe('9');
    expect(links(res.headers.link)).toEqual({
      first: '/users?offset=0&limit=2',
      prev: '/users?offset=1&limit=2',
      next: '/users?offset=5&limit=2',
      last: '/users?offset=7&limit=2',
    });
  });

  it('page + pagesize', async () => {
    const res = await api.get('/users?page=2&pagesize=4');
    expect(ids(res.json())).toEqual(users.slice(4, 8).map((u) => u.id));
    expect(links(res.headers.link).next).toBe('/users?page=3&pagesize=4');
  });

  it('size alone means page 1, limit alone means offset 0', async () => {
    expect(ids((await api.get('/users?size=3')).json())).toEqual(users.slice(0, 3).map((u) => u.id));
    expect(ids((await api.get('/users?limit=3')).json())).toEqual(users.slice(0, 3).map((u) => u.id));
  });

  it('a page past the end is an empty list, with the total and a prev link', async () => {
    const res = await api.get('/users?page=7&size=5');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
    expect(res.headers['x-total-count']).toBe('9');
    expect(links(res.headers.link)).toEqual({ first: '/users?page=1&size=5', prev: '/users?page=2&size=5', last: '/users?page=2&size=5' });
  });

  it('an empty result has total 0 and first = last', async () => {
    const res = await api.get('/users?older_than=140');
    expect(res.json()).toEqual([]);
    expect(res.headers['x-total-count']).toBe('0');
    expect(links(res.headers.link)).toEqual({ first: '/users?older_than=140&page=1&size=20', last: '/users?older_than=140&page=1&size=20' });
  });

  it('accepts a size of 100', async () => {
    expect((await api.get('/users?size=100')).statusCode).toBe(200);
  });
});

describe('GET /users: bad input', () => {
  it.each([
    ['nickname=x', { field: 'nickname', unknown: 'Unknown query parameter.' }],
    ['older_than=abc', { field: 'older_than', type: 'Must be integer.' }],
    ['younger_than=3.5', { field: 'younger_than', type: 'Must be integer.' }],
    ['older_than=', { field: 'older_than', type: 'Must be integer.' }],
    ['status=banned', { field: 'status', enum: 'Must be one of: active, inactive.' }],
    ['status=', { field: 'status', minLength: 'Must not be empty.' }],
    ['lives_in=[]', { field: 'lives_in', invalid: 'A list is written [a,b] with no empty values.' }],
    ['lives_in=[brazil,', { field: 'lives_in', invalid: 'A list is written [a,b].' }],
    ['lives_in=[brazil,,chile]', { field: 'lives_in', invalid: 'A list is written [a,b] with no empty values.' }],
    ['status=active&status=inactive', { field: 'status', invalid: 'Given more than once; takes a single value.' }],
    ['lives_in=brazil&lives_in=chile', { field: 'lives_in', invalid: 'Given more than once; a list filter takes [a,b].' }],
    ['page=1&page=2', { field: 'page', invalid: 'Given more than once; takes a single value.' }],
    ['size=5&size=6', { field: 'size', invalid: 'Given more than once; takes a single value.' }],
    ['sort_by=age&sort_by=id', { field: 'sort_by', invalid: 'Given more than once; takes a single value.' }],
    ['nickname=a&nickname=b', { field: 'nickname', unknown: 'Unknown query parameter.' }],
    ['order=desc', { field: 'order', invalid: 'Needs sort_by.' }],
    ['sort_by=age&order=down', { field: 'order', enum: 'Must be one of: asc, desc.' }],
    ['sort_by=email', { field: 'sort_by', enum: 'Must be one of: id, first_name, last_name, age, status, country.' }],
    ['sort=email:asc', { field: 'sort', enum: 'Sort field "email" is not sortable. Must be one of: id, first_name, last_name, age, status, country.' }],
    ['sort=age:up', { field: 'sort', enum: 'Direction of "age" must be asc or desc.' }],
    ['sort=age:asc:desc', { field: 'sort', invalid: 'Write sort as field:asc or field:desc, separated by commas.' }],
    ['sort=age:asc,', { field: 'sort', invalid: 'Write sort as field:asc or field:desc, separated by commas.' }],
    ['sort=', { field: 'sort', invalid: 'Write sort as field:asc or field:desc, separated by commas.' }],
    ['sort=age:asc,age:desc', { field: 'sort', invalid: 'Field "age" is given more than once.' }],
    ['sort=age:asc&sort_by=age', { field: 'sort_by', invalid: 'Cannot be combined with sort.' }],
    ['size=0', { field: 'size', minimum: 'Must be at least 1.' }],
    ['size=101', { field: 'size', maximum: 'Must be at most 100.' }],
    ['size=ten', { field: 'size', type: 'Must be integer.' }],
    ['page=0', { field: 'page', minimum: 'Must be at least 1.' }],
    ['page=-1', { field: 'page', minimum: 'Must be at least 1.' }],
    ['page=1.5', { field: 'page', type: 'Must be integer.' }],
    // The integer rule of every parameter (ids, /events' after and size): plain decimal only.
    ['page=%2B2', { field: 'page', type: 'Must be integer.' }],
    ['page=02', { field: 'page', type: 'Must be integer.' }],
    ['size=0x10', { field: 'size', type: 'Must be integer.' }],
    ['size=1e1', { field: 'size', type: 'Must be integer.' }],
    ['offset=%2010', { field: 'offset', type: 'Must be integer.' }],
    ['older_than=%2B18', { field: 'older_than', type: 'Must be integer.' }],
    ['younger_than=018', { field: 'younger_than', type: 'Must be integer.' }],
    ['pagesize=0', { field: 'pagesize', minimum: 'Must be at least 1.' }],
    ['limit=101', { field: 'limit', maximum: 'Must be at most 100.' }],
    ['offset=-1', { field: 'offset', minimum: 'Must be at least 0.' }],
    ['page=2&limit=5', { field: 'limit', invalid: 'Cannot be combined with page; use one style: page+size, offset+limit, page+pagesize or after+size.' }],
    ['offset=5&size=5', { field: 'size', invalid: 'Cannot be combined with offset; use one style: page+size, offset+limit, page+pagesize or after+size.' }],
    ['size=5&pagesize=5', { field: 'pagesize', invalid: 'Cannot be combined with size; use one style: page+size, offset+limit, page+pagesize or after+size.' }],
    ['lives_in=%E0%A4%A', { field: 'lives_in', invalid: 'Malformed percent-encoding.' }],
  ])('%s is 400 naming the parameter', async (query, detail) => {
    const res = await api.get(`/users?${query}`);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res)).toEqual({ code: 'BAD_REQUEST', message: 'Request validation failed.', details: [detail] });
  });

  it('reports every bad parameter at once', async () => {
    const res = await api.get('/users?foo=1&older_than=x&size=0&sort=nope');
    expect(res.statusCode).toBe(400);
    expect(
      errorBody(res)
        .details!.map((d) => d.field)
        .sort(),
    ).toEqual(['foo', 'older_than', 'size', 'sort']);
  });

  it('never lets a value reach SQL as text', async () => {
    const res = await api.get(`/users?first_name=${encodeURIComponent("x' OR '1'='1")}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
    const sortInjection = await api.get(`/users?sort=${encodeURIComponent('age;drop table users')}`);
    expect(sortInjection.statusCode).toBe(400);
    expect((await api.get('/users')).headers['x-total-count']).toBe('9');
  });

  it('needs the admin scope', async () => {
    expect((await client(ctx.app, ctx.tokens.read).get('/users')).statusCode).toBe(403);
  });
});
