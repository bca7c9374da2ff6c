import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, realPostgres, type TestDatabase } from '@holdfast/pg/testing';
import type { DeliveryWorker } from '@holdfast/webhook-delivery';
import pg from 'pg';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearerApi,
  CHROMIUM,
  type JourneyHost,
  LAPTOP,
  launchChromium,
  portalJourneys,
  type Receiver,
  startReceiver,
  until,
} from '../../../packages/webhook-portal/test/journeys';
import { API_BASE, createPortalHost, PORTAL_BASE } from '../src/app';
import { migrate } from '../src/migrations';

/**
 * The portal on the Express example, opened in Chromium through a portal session its backend
 * creates: the same journeys as on the reference server, then what a session may not do. A
 * read-only session is refused every write and shown no control that writes, an expired one is
 * refused, another account's ids are 404. Needs a real PostgreSQL (DATABASE_URL): the worker
 * listens on its own connection beside the API's.
 */

const ACME = 'tok-acme-e2e';
const GLOBEX = 'tok-globex-e2e';
const customers = new Map([
  [ACME, { account: 'acct_acme_e2e', name: 'Acme' }],
  [GLOBEX, { account: 'acct_globex_e2e', name: 'Globex' }],
]);

describe.skipIf(!existsSync(CHROMIUM) || !realPostgres)(
  'the portal on the Express host (needs /usr/bin/chromium and DATABASE_URL)',
  () => {
    let db: TestDatabase;
    let pool: pg.Pool;
    let server: Server;
    let worker: DeliveryWorker;
    let origin = '';
    let receiver: Receiver;
    let browser: Browser;
    let page: Page;
    /** The sessions' clock runs this far ahead of the wall clock. */
    let skewMs = 0;

    beforeAll(async () => {
      receiver = await startReceiver();
      db = await createTestDatabase();
      const url = new URL(process.env.DATABASE_URL ?? '');
      url.searchParams.set('options', `-c search_path=${db.schema}`);
      pool = new pg.Pool({ connectionString: url.toString(), max: 6 });
      pool.on('error', () => {});
      await migrate(pool);
      server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const host = createPortalHost({
        pool,
        customers,
        sessionSecret: 'express-portal-e2e-session-secret-0123456789',
        cursorSecret: 'express-portal-e2e-cursor-secret-0123456789',
        publicUrl: origin,
        retrySchedule: [200, 200],
        allowPrivateDestinations: true,
        now: () => Date.now() + skewMs,
      });
      server.on('request', host.app);
      worker = host.worker;
      worker.start();
      browser = await launchChromium();
      const context = await browser.newContext({ viewport: LAPTOP, locale: 'en-US', timezoneId: 'UTC' });
      page = await context.newPage();
      page.setDefaultTimeout(15_000);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
      await worker?.stop();
      await pool?.end();
      await receiver?.close();
      await db?.close();
    });

    /** A portal session of the customer with this token, from the host's backend route. */
    const session = async (token: string, options: { readOnly?: boolean; expiresIn?: number } = {}) => {
      const res = await fetch(`${origin}/portal-sessions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(options),
      });
      expect(res.status).toBe(201);
      const { url } = (await res.json()) as { url: string };
      expect(url.startsWith(`${origin}${PORTAL_BASE}#session=hfps_`)).toBe(true);
      return { url, token: decodeURIComponent(url.split('#session=')[1] ?? '') };
    };
    /** A management API call with a session token: the status and the body. */
    const call = async (token: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${origin}${API_BASE}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      await res.arrayBuffer();
      return res.status;
    };
    const main = (): Locator => page.getByRole('main');
    /** Loads the page afresh at a session URL: a fragment change alone would not reload it. */
    const openAt = async (url: string): Promise<void> => {
      await page.goto('about:blank');
      await page.goto(url);
    };
    const api = bearerApi(() => `${origin}${API_BASE}`, ACME);

    const host = (): JourneyHost => ({
      page,
      receiver,
      portalUrl: `${origin}${PORTAL_BASE}`,
      eventType: 'order.created',
      async open() {
        await openAt((await session(ACME)).url);
        await main().getByRole('heading', { name: 'Webhook endpoints', level: 1 }).waitFor();
        // The token left the address bar for the tab's session storage.
        expect(page.url()).toBe(`${origin}${PORTAL_BASE}#/endpoints`);
      },
      api,
    });
    const journeys = portalJourneys(host);

    it('delivers an order the service writes, through its outbox', { timeout: 30_000 }, async () => {
      receiver.healthy = true;
      const res = await fetch(`${origin}/orders`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ACME}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ total: 4200 }),
      });
      expect(res.status).toBe(201);
      const order = (await res.json()) as { id: string; event: string };
      await until(
        'the order event to arrive verified',
        async () => receiver.receipts.some((r) => r.webhookId === order.event && r.verified),
        async () => {},
      );
      expect((await api('GET', `/events/${order.event}`)).type).toBe('order.created');
    });

    it('answers bad input to its own routes with problem+json, never a 5xx', async () => {
      const post = (path: string, token: string | undefined, body: string) =>
        fetch(`${origin}${path}`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
          },
          body,
        });
      for (const [path, token, body, status] of [
        ['/portal-sessions', undefined, '{}', 401],
        ['/portal-sessions', 'tok-nobody', '{}', 401],
        ['/portal-sessions', ACME, '{"expiresIn":86401}', 400],
        ['/portal-sessions', ACME, '{"expiresIn":0}', 400],
        ['/portal-sessions', ACME, '{"readOnly":"yes"}', 400],
        ['/orders', ACME, '{"total":"42"}', 400],
        ['/orders', ACME, '{"total":-1}', 400],
        ['/orders', ACME, '{not json', 400],
        ['/orders', undefined, '{"total":1}', 401],
      ] as const) {
        const res = await post(path, token, body);
        expect(res.status, `${path} ${body}`).toBe(status);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        await res.arrayBuffer();
      }
      expect((await fetch(`${origin}${API_BASE}/events`)).status).toBe(401);
    });

    it('refuses every write of a read-only session with 403, and shows it no control that writes', {
      timeout: 90_000,
    }, async () => {
      // A dead delivery, so the dead letters have a row whose Replay a writer would see.
      receiver.healthy = false;
      const dead = String(
        (await api('POST', `/webhook-endpoints/${journeys.endpointId}/test`, { eventType: 'order.created' }))
          .id,
      );
      await until(
        'the delivery to die',
        async () => (await api('GET', `/deliveries/${dead}`)).status === 'dead',
        async () => {},
      );
      const { url, token } = await session(ACME, { readOnly: true });
      const id = journeys.endpointId;
      const writes: [string, string, unknown?][] = [
        ['POST', '/webhook-endpoints', { url: receiver.url, eventTypes: ['order.created'] }],
        ['PATCH', `/webhook-endpoints/${id}`, { description: 'changed' }],
        ['DELETE', `/webhook-endpoints/${id}`],
        ['POST', `/webhook-endpoints/${id}/rotate-secret`],
        ['POST', `/webhook-endpoints/${id}/test`, { eventType: 'order.created' }],
        ['POST', `/webhook-endpoints/${id}/recover`, { since: '2020-01-01T00:00:00Z' }],
        ['POST', `/deliveries/${dead}/replay`],
      ];
      for (const [method, path, body] of writes)
        expect(await call(token, method, path, body), `${method} ${path}`).toBe(403);
      expect(await call(token, 'GET', `/webhook-endpoints/${id}`)).toBe(200);
      expect((await api('GET', `/webhook-endpoints/${id}`)).description).not.toBe('changed');

      await openAt(url);
      await main().getByRole('heading', { name: 'Webhook endpoints', level: 1 }).waitFor();
      expect(await page.locator('#mode').textContent()).toBe('Test mode · read-only');
      const row = main().locator(`tr[data-id="${id}"]`);
      await row.getByRole('link', { name: /^Health of / }).waitFor();
      expect(await main().getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
      expect(await row.getByRole('button').allTextContents()).toEqual([]);
      await page.goto(`${origin}${PORTAL_BASE}#/endpoints/${id}`);
      await main().locator('svg.health-chart').waitFor();
      for (const name of ['Send test event', 'Recover'])
        expect(await main().getByRole('button', { name, exact: true }).count(), name).toBe(0);
      await page.goto(`${origin}${PORTAL_BASE}#/dead-letters`);
      await main().locator(`tr[data-id="${dead}"]`).waitFor();
      expect(
        await main()
          .getByRole('button', { name: /^Replay delivery/ })
          .count(),
      ).toBe(0);
      await page.goto(`${origin}${PORTAL_BASE}#/deliveries/${dead}`);
      await main().getByRole('heading', { name: 'Attempt log' }).waitFor();
      await main().getByText('dead', { exact: true }).first().waitFor();
      expect(
        await main()
          .getByRole('button', { name: /^Replay delivery/ })
          .count(),
      ).toBe(0);
    });

    it('refuses an expired session: the API answers 401 and the page signs out', async () => {
      const { url, token } = await session(ACME, { expiresIn: 60 });
      expect(await call(token, 'GET', '/webhook-endpoints')).toBe(200);
      skewMs = 61_000;
      try {
        expect(await call(token, 'GET', '/webhook-endpoints')).toBe(401);
        await openAt(url);
        await page.getByLabel('API key').waitFor();
        expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      } finally {
        skewMs = 0;
      }
    });

    it('answers 404 for another account’s ids, through the API and the portal', async () => {
      const { url, token } = await session(GLOBEX);
      const id = journeys.endpointId;
      for (const [method, path] of [
        ['GET', `/webhook-endpoints/${id}`],
        ['GET', `/webhook-endpoints/${id}/stats`],
        ['PATCH', `/webhook-endpoints/${id}`],
        ['DELETE', `/webhook-endpoints/${id}`],
        ['GET', `/deliveries/${journeys.replayedId}`],
        ['GET', `/deliveries/${journeys.replayedId}/attempts`],
        ['POST', `/deliveries/${journeys.replayedId}/replay`],
        ['GET', `/events/${journeys.eventId}`],
      ] as const)
        expect(
          await call(token, method, path, method === 'PATCH' ? { description: 'x' } : undefined),
          path,
        ).toBe(404);
      await openAt(url);
      await main().getByRole('heading', { name: 'Webhook endpoints', level: 1 }).waitFor();
      expect(await main().locator(`tr[data-id="${id}"]`).count()).toBe(0);
      for (const view of [
        `#/endpoints/${id}`,
        `#/deliveries/${journeys.replayedId}`,
        `#/events/${journeys.eventId}`,
      ]) {
        await page.goto(`${origin}${PORTAL_BASE}${view}`);
        await expect
          .poll(() => main().getByRole('alert').first().textContent(), { message: view })
          .toMatch(/HTTP 404/);
      }
    });
  },
);
