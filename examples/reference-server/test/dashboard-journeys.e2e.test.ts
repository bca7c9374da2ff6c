import { existsSync } from 'node:fs';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe } from 'vitest';
import {
  bearerApi,
  CHROMIUM,
  type JourneyHost,
  LAPTOP,
  launchChromium,
  portalJourneys,
  type Receiver,
  startReceiver,
} from '../../../packages/webhook-portal/test/journeys';
import { startDashboardServer } from './dashboard-server';

/**
 * The portal's shared journeys (`packages/webhook-portal/test/journeys.ts`) on the reference
 * server, signed in at /dashboard with an API key; the Express example runs the same ones through
 * a portal session.
 */

const KEY = 'hf_test_journeysE2eKey0123456789abcdef';

describe.skipIf(!existsSync(CHROMIUM))(
  'portal journeys on the reference server (needs /usr/bin/chromium)',
  () => {
    let db: TestDatabase | undefined;
    let server: { url: string; close(): Promise<void> };
    let receiver: Receiver;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      receiver = await startReceiver();
      db = await createTestDatabase({ max: 1 });
      server = await startDashboardServer(db, { key: KEY, account: 'acct_journeysE2e' });
      browser = await launchChromium();
      const context = await browser.newContext({ viewport: LAPTOP, locale: 'en-US', timezoneId: 'UTC' });
      page = await context.newPage();
      page.setDefaultTimeout(15_000);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await receiver?.close();
      await db?.close();
    });

    const host = (): JourneyHost => ({
      page,
      receiver,
      portalUrl: `${server.url}/dashboard`,
      eventType: 'subscription.created',
      async open() {
        await page.goto(`${server.url}/dashboard`);
        await page.getByLabel('API key').fill(KEY);
        await page.getByLabel('API key').press('Enter');
        await page.getByRole('heading', { name: 'Webhook endpoints', level: 1 }).waitFor();
      },
      api: bearerApi(() => `${server.url}/v1`, KEY),
    });

    portalJourneys(host);
  },
);
