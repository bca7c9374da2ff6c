import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from './webhooks-harness';

// The dashboard shows each endpoint's signature scheme and, for v1a, its public key with a copy
// button; the add form creates a v1a endpoint. In a real browser (Debian's Chromium).

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'hf_test_webhooksAllScopes000000000001';

let server: TestServer;
let browser: Browser;
let page: Page;

describe.skipIf(!existsSync(CHROMIUM))('dashboard: v1a endpoints', () => {
  beforeAll(async () => {
    server = await startTestServer();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
      ],
    });
    const context = await browser.newContext({
      locale: 'en-US',
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    page = await context.newPage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows scheme and public key with a copy button, and creates a v1a endpoint from the form', async () => {
    const v1a = await api(server.url, 'POST', '/v1/webhook-endpoints', {
      body: { url: 'https://example.com/v1a', signatureScheme: 'v1a' },
    });
    await api(server.url, 'POST', '/v1/webhook-endpoints', { body: { url: 'https://example.com/v1' } });
    const publicKey = String(v1a.body.publicKey);

    await page.goto(`${server.url}/dashboard`);
    await page.getByLabel('API key').fill(KEY);
    await page.getByLabel('API key').press('Enter');
    const main = page.locator('#main');
    await main.getByRole('heading', { name: 'Webhook endpoints', level: 1 }).waitFor();
    const row = main.getByRole('row').filter({ hasText: 'https://example.com/v1a' });
    await row.getByText(publicKey).waitFor();
    await expect.poll(() => row.textContent()).toContain('v1a');
    const copy = row.getByRole('button', { name: 'Copy public key of https://example.com/v1a' });
    await copy.click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(publicKey);
    const v1Row = main
      .getByRole('row')
      .filter({ hasText: 'https://example.com/v1' })
      .filter({ hasNotText: 'v1a' });
    expect(await v1Row.getByRole('button', { name: /Copy public key/ }).count()).toBe(0);

    await main.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByLabel('Endpoint URL').fill('https://example.com/from-form');
    await page.getByLabel('Signature scheme').selectOption('v1a');
    await main.getByRole('button', { name: 'Create endpoint' }).click();
    // No signing key is shown for v1a: it never leaves the server; the list shows the public key.
    const formRow = main.getByRole('row').filter({ hasText: 'https://example.com/from-form' });
    await expect.poll(() => formRow.textContent()).toContain('v1a');
    expect(await page.locator('#signing-secret').count()).toBe(0);
    const listed = await api(server.url, 'GET', '/v1/webhook-endpoints?limit=100');
    const created = listed.body.data.find((e: { url: string }) => e.url === 'https://example.com/from-form');
    expect(created).toMatchObject({ signatureScheme: 'v1a' });
    expect(created.publicKey).toMatch(/^whpk_/);
    expect(await formRow.getByRole('button', { name: /Copy public key/ }).count()).toBe(1);
  }, 120_000);
});
