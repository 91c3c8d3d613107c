import { createServer, connect, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from './redis.js';
import { freePort } from './process.js';

// The tests' own Redis (test/redis.ts) when the port it picked is taken before redis-server binds it.

function ping(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      resolve(d.toString());
      socket.end();
    });
    socket.once('error', reject);
  });
}

describe('the tests’ own Redis', () => {
  let taken: Server | undefined;
  let redis: TestRedis | undefined;
  afterEach(async () => {
    await redis?.stop();
    await new Promise((resolve) => (taken ? taken.close(resolve) : resolve(undefined)));
  });

  it('starts on another port when the one it picked was bound meanwhile', async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken!.listen(0, '127.0.0.1', resolve));
    const busy = (taken.address() as { port: number }).port;
    const picked: number[] = [];
    redis = await startRedis(async () => {
      const port = picked.length === 0 ? busy : await freePort();
      picked.push(port);
      return port;
    });
    expect(picked).toHaveLength(2);
    expect(picked[0]).toBe(busy);
    expect(new URL(redis.url).port).toBe(String(picked[1]));
    expect(await ping(redis.url)).toBe('+PONG\r\n');
  });
});
