import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalSession, type PortalCaller, portalPages, portalSessionAuthorizer } from '../src/index';

/**
 * The portal page opened through a portal session in Chromium: the token leaves the address bar
 * for the tab's session storage and reaches the API only as a Bearer token. The host here is the
 * smallest there is: the portal's pages and one list route behind the session authorizer.
 */
const CHROMIUM = '/usr/bin/chromium';
const SECRET = 'portal-session-e2e-secret-0123456789abcdef';

let server: ServerType;
let origin: string;
let browser: Browser;
let page: Page;
let now = Date.now();
/** What the API saw: each request's path with query, and the caller it authorized. */
const seen: { url: string; caller: PortalCaller | undefined }[] = [];

beforeAll(async () => {
  const pages = portalPages({ basePath: '/portal', apiBase: '/api', eventTypes: ['order.created'] });
  const authorize = portalSessionAuthorizer({ secret: SECRET, now: () => now });
  const api = async (request: Request): Promise<Response> => {
    const caller = await authorize(request);
    const url = new URL(request.url);
    seen.push({ url: url.pathname + url.search, caller });
    if (caller === undefined)
      return Response.json(
        { title: 'Unauthenticated', status: 401 },
        { status: 401, headers: { 'Content-Type': 'application/problem+json' } },
      );
    return Response.json({ data: [], pageInfo: { nextCursor: null, hasMore: false } });
  };
  await new Promise<void>((resolve) => {
    server = serve(
      {
        fetch: async (request) =>
          (await pages(request)) ??
          (new URL(request.url).pathname.startsWith('/api/')
            ? api(request)
            : new Response(null, { status: 404 })),
        port: 0,
        hostname: '127.0.0.1',
      },
      () => resolve(),
    );
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  page = await (await browser.newContext({ viewport: { width: 800, height: 800 } })).newPage();
  page.setDefaultTimeout(15_000);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe.skipIf(!existsSync(CHROMIUM))(
  'the portal opened with a portal session (needs /usr/bin/chromium)',
  () => {
    it('moves the token from the fragment to session storage and signs the API calls with it', async () => {
      const session = await createPortalSession(
        { account: 'acct_e2e', mode: 'test', scopes: ['webhooks:read'], expiresIn: 300, readOnly: true },
        { secret: SECRET, portalUrl: `${origin}/portal`, now: () => now },
      );
      await page.goto(session.url);
      await page.getByRole('heading', { name: 'Webhook endpoints' }).waitFor();
      expect(page.url()).toBe(`${origin}/portal#/endpoints`);
      expect(await page.evaluate(() => [...Object.values(sessionStorage)])).toEqual([session.token]);
      expect(await page.locator('#mode').textContent()).toBe('Test mode · read-only');
      const calls = seen.filter((s) => s.url.startsWith('/api/webhook-endpoints'));
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((s) => s.caller?.account === 'acct_e2e' && s.caller.readOnly === true)).toBe(true);
      expect(seen.some((s) => s.url.includes(session.token.slice(5, 20)))).toBe(false);
      // A read-only session is offered nothing that writes.
      expect(await page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
      // The event types come from the server: the deliveries filter offers what the host configured.
      await page.goto(`${origin}/portal#/deliveries`);
      const types = page.getByLabel('Event type', { exact: true }).locator('option');
      await expect
        .poll(() => types.evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value)))
        .toEqual(['', 'order.created']);
    });

    it('signs the tab out once the session has expired', async () => {
      now += 301_000;
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
      await page.getByLabel('API key').waitFor();
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      expect(seen.at(-1)?.caller).toBeUndefined();
    });
  },
);
