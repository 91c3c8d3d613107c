import { mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createArtist, type TestContext } from '../helpers.js';

// /docs as a person meets it: Debian's Chromium, driven by playwright-core, against the app on a real port.

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let ctx: TestContext;
let browser: Browser;
let base: string;

beforeAll(async () => {
  ctx = await buildTestApp();
  base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});
afterAll(async () => {
  await browser?.close();
  await ctx?.close();
});

describe('GET /docs in a browser', () => {
  it('authorizes with a token and runs "Try it out" on GET /artists/{artist_id}: 200 with the artist', async () => {
    const artist = await createArtist(client(ctx.app, ctx.tokens.write), 'Broadcast', 'https://img.example.com/broadcast.jpg');
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    // Each step waits for the page's state (an element shown, a response seen), bounded only by the
    // test's own time (vitest.browser.config.ts), not by a shorter bound of its own per step.
    page.setDefaultTimeout(0);
    const problems: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));

    await page.goto(`${base}/docs`);
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    const modal = page.locator('.modal-ux');
    await modal.locator('input').first().fill(ctx.tokens.read);
    await modal.locator('button.authorize').click();
    await modal.getByRole('button', { name: 'Remove authorization' }).waitFor(); // "Logout" shows once authorized
    await modal.locator('button.btn-done').click();

    const operation = page.locator('#operations-artists-getArtist');
    await operation.locator('.opblock-summary').first().click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.locator('input[placeholder="artist_id"]').fill(String(artist.id));
    const answered = page.waitForResponse((r) => r.url() === `${base}/artists/${artist.id}`);
    await operation.getByRole('button', { name: 'Execute' }).click();
    const response = await answered;
    expect(response.status()).toBe(200);
    expect(response.request().headers().authorization).toBe(`Bearer ${ctx.tokens.read}`);

    const live = operation.locator('.live-responses-table');
    await expect.poll(() => live.locator('tbody .response-col_status').first().textContent()).toContain('200');
    const shown = JSON.parse((await live.locator('tbody .response-col_description pre').first().textContent()) ?? '{}') as unknown;
    expect(shown).toEqual({ name: 'Broadcast', image: 'https://img.example.com/broadcast.jpg' });

    // Nothing the page needs was blocked (a CSP violation or a script error shows up here). Checked
    // before the screenshots, which inject a caret-hiding style that the strict CSP rightly refuses.
    expect(problems).toEqual([]);

    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/docs.png', fullPage: false });
    await operation.scrollIntoViewIfNeeded();
    await page.screenshot({ path: 'test-artifacts/docs-try-it-out.png' });
    await page.close();
  });
});
