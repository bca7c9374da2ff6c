import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createTestDatabase, type TestDatabase } from '@holdfast/pg/testing';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHROMIUM,
  EMBEDDED,
  isRecord,
  LAPTOP,
  launchChromium,
  layoutProblems,
  type Receiver,
  replayFromDeadLetters,
  rotateSecretOf,
  saveRefusedFilter,
  sendTestEvent,
  startReceiver,
  TIME_FORMAT,
  until,
} from '../../../packages/webhook-portal/test/journeys';
import { startDashboardServer } from './dashboard-server';

/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against the real
 * reference server and a real local receiver: sign in, create an endpoint, watch a delivery fail
 * into the dead-letter view, heal the receiver, replay, and see the successful attempt.
 * Every view is checked at laptop (1,280 px), embedded (800 px) and phone (375 px) widths: no
 * sideways scrolling, no table wider than its frame, URLs wrapped only between their parts, row
 * actions at most two lines high, and every time in the one format. With HOLDFAST_SCREENSHOTS=1,
 * its screenshots at each width land in test-results/dashboard/ (40-odd full-page PNGs cost the
 * suite several seconds of CPU, so they are taken only when someone will look at them).
 */

const hasChromium = existsSync(CHROMIUM);
const ARTIFACTS = new URL('../test-results/dashboard/', import.meta.url);
const SCREENSHOTS = process.env.HOLDFAST_SCREENSHOTS === '1';
/** Set to refresh the README's screenshot (docs/dashboard.png) from this run. */
const UPDATE_DOCS = process.env.HOLDFAST_UPDATE_DASHBOARD_SCREENSHOT === '1';
const DOCS_SCREENSHOT = new URL('../../../docs/dashboard.png', import.meta.url);
const DOCS_DELIVERY_SCREENSHOT = new URL('../../../docs/dashboard-delivery.png', import.meta.url);
const DOCS_HEALTH_SCREENSHOT = new URL('../../../docs/dashboard-health.png', import.meta.url);
/** Markup in a payload: the page must show it as text (an element would set window.planted). */
const PLANTED = '<img src=x onerror="window.planted=true"> & </pre>';

const KEY = 'hf_test_dashboardE2eKey0123456789abcdef';
const ACCOUNT = 'acct_dashboardE2e';
const PHONE = { width: 375, height: 812 };

describe.skipIf(!hasChromium)('dashboard in Chromium (needs /usr/bin/chromium)', () => {
  let db: TestDatabase | undefined;
  let server: { url: string; close(): Promise<void> };
  let receiver: Receiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const consoleLines: string[] = [];
  const foreignRequests: string[] = [];
  let endpointId = '';
  let deliveryId = '';
  let secret = '';
  let extra = { id: '', secret: '' };

  const api = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${server.url}/v1${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${KEY}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json: unknown = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
    if (!isRecord(json)) throw new Error(`${method} ${path}: the body is not an object`);
    return json;
  };

  /** Views checked for stray text by {@link shoot}: the test asserts every route was walked. */
  const walked = new Set<string>();
  /**
   * Fails when the page shows `null`, `undefined` or `[object Object]` outside a JSON block (a
   * payload may hold a real `null`): what a value rendered without a check looks like.
   */
  const expectNoStrayText = async (name: string): Promise<void> => {
    await page.waitForLoadState('networkidle');
    const text = await page.evaluate(() => {
      const copy = document.body.cloneNode(true);
      if (!(copy instanceof HTMLElement)) return '';
      for (const block of copy.querySelectorAll('pre.json-block, pre.body-prefix')) block.remove();
      // textContent, not innerText: text the stylesheet hides counts too (screen readers read it).
      return copy.textContent ?? '';
    });
    expect(text, `${name} shows stray text`).not.toMatch(/\bnull\b|\bundefined\b|\[object Object\]/);
    const view = new URL(page.url()).hash.replace(/\/[a-z]+_[A-Za-z0-9_-]+/g, '/:id').split('?')[0];
    // No hash is the endpoints view, the dashboard's home.
    walked.add(view === undefined || view === '' ? '#/endpoints' : view);
  };

  /**
   * Checks the current view's layout ({@link layoutProblems}) at laptop, embedded and phone width,
   * saving a screenshot at each when asked to.
   */
  const shoot = async (name: string, fullPage = true): Promise<void> => {
    await expectNoStrayText(name);
    for (const [width, size] of [
      ['laptop', LAPTOP],
      ['embedded', EMBEDDED],
      ['phone', PHONE],
    ] as const) {
      await page.setViewportSize(size);
      // The card layout follows a media query's change event, which fires at the next frame:
      // checking the layout before it measures the old one.
      await page.evaluate(
        () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
      );
      if (SCREENSHOTS)
        await page.screenshot({ path: new URL(`${width}-${name}.png`, ARTIFACTS).pathname, fullPage });
      const problems = await page.evaluate(layoutProblems, {
        phone: width === 'phone',
        timeFormat: TIME_FORMAT.source,
      });
      expect(problems, `${name} at ${size.width} px`).toEqual([]);
    }
    await page.setViewportSize(LAPTOP);
  };

  const main = (): Locator => page.getByRole('main');
  /** Rows of the attempt log whose HTTP status cell reads exactly `status`. */
  const attemptRows = (status: number): Locator =>
    main()
      .locator('tbody tr')
      .filter({ has: page.locator('td[data-label="HTTP status"]', { hasText: new RegExp(`^${status}$`) }) });
  const refresh = async (): Promise<void> => {
    await main().getByRole('button', { name: 'Refresh', exact: true }).click();
  };

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    receiver = await startReceiver();
    db = await createTestDatabase({ max: 1 });
    server = await startDashboardServer(
      db,
      { key: KEY, account: ACCOUNT },
      // The paging case needs more endpoints than a page holds (20), above the default quota of 16.
      { HOLDFAST_MAX_ENDPOINTS: '40' },
    );
    browser = await launchChromium();
    context = await browser.newContext({
      viewport: LAPTOP,
      colorScheme: 'light',
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(server.url).origin,
    });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (message) => consoleLines.push(message.text()));
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(server.url) && !url.startsWith('data:')) foreignRequests.push(url);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
    await db?.close();
  });

  it('serves the page with strict security headers and no inline script', async () => {
    const res = await fetch(`${server.url}/dashboard`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    for (const asset of ['app.js', 'app.css', 'api.js', 'views/endpoints.js']) {
      const file = await fetch(`${server.url}/dashboard/${asset}`);
      expect(file.status).toBe(200);
      // Module scripts run only when served with a JavaScript MIME type.
      expect(file.headers.get('content-type')).toMatch(
        asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/,
      );
      expect(file.headers.get('cache-control')).toBe('no-cache');
      expect(file.headers.get('content-security-policy')).toContain("default-src 'none'");
      await file.arrayBuffer();
    }
  });

  it('refuses a wrong key with a readable error and its request id, then signs in by keyboard', async () => {
    await page.goto(`${server.url}/dashboard`);
    const keyField = page.getByLabel('API key');
    await expect.poll(() => keyField.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type('hf_test_not_a_real_key');
    await page.keyboard.press('Enter');
    const alert = main().getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/HTTP 401/);
    expect(await alert.textContent()).toMatch(/Request ID: ?req_/);
    await shoot('sign-in-error');

    await keyField.fill(KEY);
    await keyField.press('Enter');
    await main().getByRole('heading', { name: 'Webhook endpoints', level: 1 }).waitFor();
    expect(page.url()).not.toContain(KEY);
    expect(await page.evaluate(() => sessionStorage.getItem('holdfast.dashboard.apiKey'))).toBe(KEY);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect((await context.cookies()).length).toBe(0);
  });

  it('explains a refused endpoint with the problem detail and request id', async () => {
    await main().getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByLabel('Endpoint URL').fill('not a url');
    await main().getByRole('button', { name: 'Create endpoint' }).click();
    const alert = main().getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/HTTP 4\d\d/);
    expect(await alert.textContent()).toMatch(/Request ID: ?req_/);
    await shoot('endpoint-error');
  });

  it('creates an endpoint for the receiver and shows its secret once, with a working copy button', async () => {
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description').fill('Local receiver (fails until healed)');
    await page.getByRole('checkbox', { name: 'subscription.created' }).check();
    await main().getByRole('button', { name: 'Create endpoint' }).click();

    const secretField = page.getByRole('textbox', { name: 'Signing secret' });
    await secretField.waitFor();
    secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    receiver.secret = secret;
    await page.getByRole('button', { name: 'Copy signing secret' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    const row = main().getByRole('row').filter({ hasText: receiver.url });
    await row.waitFor();
    endpointId = (await row.getAttribute('data-id')) ?? '';
    expect(endpointId).toMatch(/^we_/);
    await shoot('endpoint-secret');

    await page.getByRole('button', { name: 'I have saved it' }).click();
    await refresh();
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);
    // The pacing column says what its number is: the adaptive limit and its ceiling.
    expect(await row.locator('td[data-label="Pacing"]').textContent()).toMatch(/^limit \d+ \(max \d+\)/);
    expect(await row.textContent()).not.toContain('in flight');
    // The URL wraps only at its separators: every text piece of it ends at one (or the end).
    const pieces = await row
      .locator('.url')
      .first()
      .evaluate((el) =>
        [...el.childNodes].flatMap((n) => (n.nodeType === Node.TEXT_NODE ? [n.textContent ?? ''] : [])),
      );
    expect(pieces.join('')).toBe(receiver.url);
    for (const piece of pieces.slice(0, -1)) expect(piece).toMatch(/[/?&]$/);
    await shoot('endpoints');
  });

  it('labels every control', async () => {
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea, button, a[href]')]
        .filter((el) => {
          const labelled =
            (el instanceof HTMLInputElement ||
              el instanceof HTMLSelectElement ||
              el instanceof HTMLTextAreaElement) &&
            (el.labels?.length ?? 0) > 0;
          return !labelled && !el.getAttribute('aria-label') && !el.textContent?.trim();
        })
        .map((el) => el.outerHTML),
    );
    expect(unlabelled).toEqual([]);
  });

  it('shows the failing attempts and the dead delivery in the dead-letter view', {
    timeout: 90_000,
  }, async () => {
    const method = await api('POST', '/payment-methods', {
      type: 'card',
      card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 },
    });
    await api('POST', '/subscriptions', {
      paymentMethod: method.id,
      plan: 'pro',
      metadata: { note: PLANTED },
    });

    await page
      .getByRole('navigation', { name: 'Dashboard' })
      .getByRole('link', { name: 'Dead letters' })
      .click();
    await main().getByRole('heading', { name: 'Dead letters', level: 1 }).waitFor();
    const deadRow = main().getByRole('row').filter({ hasText: 'subscription.created' });
    await until('the delivery to die', async () => (await deadRow.count()) > 0, refresh);
    // Lists show where a delivery went (the endpoint's URL), not its id.
    const endpointUrl = String((await api('GET', `/webhook-endpoints/${endpointId}`)).url);
    await until(
      'the endpoint URL in the list',
      async () => ((await deadRow.first().textContent()) ?? '').includes(endpointUrl),
      async () => {},
    );
    expect(await deadRow.first().textContent()).not.toContain(endpointId);
    await shoot('dead-letters');

    await page
      .getByRole('navigation', { name: 'Dashboard' })
      .getByRole('link', { name: 'Deliveries' })
      .click();
    await page.getByLabel('Status', { exact: true }).selectOption('dead');
    await page.getByLabel('Endpoint', { exact: true }).selectOption(endpointId);
    // The event-type filter offers the same choices as the endpoint form.
    const typeChoices = await page
      .getByLabel('Event type', { exact: true })
      .locator('option')
      .allTextContents();
    expect(typeChoices).toContain('subscription.created');
    expect(typeChoices).toContain('order.created');
    await page.getByLabel('Event type', { exact: true }).selectOption('subscription.created');
    await main().getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.url()).toContain('status=dead');
    const filtered = main().getByRole('row').filter({ hasText: 'subscription.created' });
    await filtered.first().waitFor();
    await shoot('deliveries-filtered');

    const link = filtered.first().getByRole('link');
    deliveryId = (await link.textContent()) ?? '';
    expect(deliveryId).toMatch(/^dlv_/);
    await link.click();
    await main().getByRole('heading', { name: 'Attempt log' }).waitFor();
    const failed = attemptRows(500);
    await until('three failed attempts', async () => (await failed.count()) === 3, refresh);
    expect(await failed.first().textContent()).toContain('receiver down: simulated outage');
    expect(await failed.first().textContent()).toMatch(/\d+ ms/);
    expect(await main().getByText('dead', { exact: true }).count()).toBeGreaterThan(0);
    await shoot('delivery-dead');
    expect(receiver.receipts.filter((r) => r.answered === 500)).toHaveLength(3);
  });

  it('replays the dead delivery once the receiver is healthy and shows the successful attempt', {
    timeout: 90_000,
  }, async () => {
    receiver.healthy = true;
    await main()
      .getByRole('button', { name: `Replay delivery ${deliveryId}` })
      .click();
    const succeeded = attemptRows(200);
    await until(
      'the replayed attempt to succeed',
      async () => (await succeeded.count()) === 1,
      async () => {},
    );
    await main().getByText('succeeded', { exact: true }).first().waitFor();
    expect(await succeeded.textContent()).toContain('ok: received');
    expect(await attemptRows(500).count()).toBe(3);

    const ok = receiver.receipts.filter((r) => r.answered === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]?.verified).toBe(true);
    // Standard Webhooks: the id is the event id and stays the same across retries and replays.
    expect(new Set(receiver.receipts.map((r) => r.webhookId)).size).toBe(1);
    // Nothing to replay once the delivery succeeded.
    await expect
      .poll(() =>
        main()
          .getByRole('button', { name: `Replay delivery ${deliveryId}` })
          .count(),
      )
      .toBe(0);
    await shoot('delivery-replayed');
  });

  it('shows the delivery’s payload as escaped text and links its event', async () => {
    const delivery = await api('GET', `/deliveries/${deliveryId}`);
    const eventId = String(delivery.event ?? '');
    expect(eventId).toMatch(/^evt_/);
    const payload = main().locator('pre.json-block');
    await payload.waitFor();
    const event = await api('GET', `/events/${eventId}`);
    // Pretty-printed: exactly the event as the API answers it, two-space indented.
    expect(await payload.textContent()).toBe(JSON.stringify(event, null, 2));
    // The markup planted in the subscription's metadata is text on the page, never an element.
    expect(await payload.textContent()).toContain(JSON.stringify(PLANTED));
    expect(await payload.locator('img, script').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { planted?: boolean }).planted)).toBeUndefined();

    await main().getByRole('link', { name: eventId }).click();
    await main().getByRole('heading', { name: 'Event', level: 1 }).waitFor();
    expect(page.url()).toContain(`#/events/${eventId}`);
    await expect
      .poll(() => main().locator('pre.json-block').textContent())
      .toBe(JSON.stringify(event, null, 2));
    await shoot('event');
  });

  it('replays from Dead letters: the row leaves the view, a notice links it, and a reload agrees', {
    timeout: 90_000,
  }, async () => {
    receiver.healthy = false;
    const method = await api('POST', '/payment-methods', {
      type: 'card',
      card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 },
    });
    const subscription = await api('POST', '/subscriptions', { paymentMethod: method.id, plan: 'team' });
    const nav = page.getByRole('navigation', { name: 'Dashboard' });
    await nav.getByRole('link', { name: 'Dead letters' }).click();
    await main().getByRole('heading', { name: 'Dead letters', level: 1 }).waitFor();
    // The new dead delivery is the one whose event is about this subscription.
    let dead = '';
    await until(
      'the second delivery to die',
      async () => {
        const list = await api('GET', `/deliveries?status=dead&endpoint=${endpointId}`);
        for (const d of Array.isArray(list.data) ? list.data : []) {
          if (!isRecord(d) || d.id === deliveryId) continue;
          const event = await api('GET', `/events/${String(d.event)}`);
          const data = isRecord(event.data) && isRecord(event.data.object) ? event.data.object : {};
          if (data.id === subscription.id) dead = String(d.id);
        }
        return dead !== '' && (await main().locator(`tr[data-id="${dead}"]`).count()) === 1;
      },
      refresh,
    );
    receiver.healthy = true;
    const notice = await replayFromDeadLetters(page, dead);
    expect(await notice.getByRole('link', { name: dead }).getAttribute('href')).toBe(`#/deliveries/${dead}`);
    // Gone from the view at once, not left behind as "pending" with an active Replay.
    expect(await main().locator(`tr[data-id="${dead}"]`).count()).toBe(0);
    expect(
      await main()
        .getByRole('button', { name: `Replay delivery ${dead}` })
        .count(),
    ).toBe(0);
    await shoot('dead-letters-replayed');
    await refresh();
    await main()
      .getByText(/Showing \d+|No dead letters/)
      .waitFor();
    expect(await main().locator(`tr[data-id="${dead}"]`).count()).toBe(0);
    await notice
      .getByRole('link', { name: dead })
      .click()
      .catch(async () => {
        await page.goto(`${server.url}/dashboard#/deliveries/${dead}`);
      });
    await until(
      'the replayed delivery to succeed',
      async () => (await attemptRows(200).count()) === 1,
      async () => {},
    );
    // The README's pictures: this delivery carries an ordinary subscription, not the planted markup.
    if (UPDATE_DOCS) {
      await main().locator('pre.json-block').waitFor();
      expect(await main().locator('pre.json-block').textContent()).not.toContain('onerror');
      await writeFile(DOCS_SCREENSHOT, await page.screenshot({ fullPage: false }));
      await writeFile(DOCS_DELIVERY_SCREENSHOT, await page.screenshot({ fullPage: true }));
    }
  });

  it('draws the endpoint health chart from the stats API, with a text alternative, and recovers since a time', {
    timeout: 60_000,
  }, async () => {
    await page.goto(`${server.url}/dashboard#/endpoints/${endpointId}`);
    await main().getByRole('heading', { name: 'Endpoint health', level: 1 }).waitFor();
    const chart = main().locator('svg.health-chart');
    await chart.waitFor();
    const stats = await api('GET', `/webhook-endpoints/${endpointId}/stats?window=24h`);
    const expected = (
      stats.buckets as { start: string; succeeded: number; failed: number; dead: number }[]
    ).map((b) => ({ start: b.start, succeeded: b.succeeded, failed: b.failed, dead: b.dead }));
    // The mix this run made: the delivery failed three times, then succeeded on replay.
    const sum = (k: 'succeeded' | 'failed' | 'dead') => expected.reduce((n, b) => n + b[k], 0);
    expect(sum('succeeded')).toBeGreaterThanOrEqual(1);
    expect(sum('failed') + sum('dead')).toBeGreaterThanOrEqual(3);
    const drawn = await chart.locator('g.bucket').evaluateAll((groups) =>
      groups.map((g) => {
        const heights: Record<string, number> = {};
        for (const rect of g.querySelectorAll('rect'))
          heights[rect.getAttribute('data-outcome') ?? ''] = Number(rect.getAttribute('height'));
        return {
          start: g.getAttribute('data-start') ?? '',
          succeeded: Number(g.getAttribute('data-succeeded')),
          failed: Number(g.getAttribute('data-failed')),
          dead: Number(g.getAttribute('data-dead')),
          heights,
        };
      }),
    );
    expect(drawn.map(({ heights: _, ...b }) => b)).toEqual(expected);
    // Bar heights are proportional to the counts: one scale for every bucket and outcome.
    const ratios = drawn.flatMap((b) =>
      (['succeeded', 'failed', 'dead'] as const).flatMap((k) =>
        b[k] > 0 ? [(b.heights[k] ?? 0) / b[k]] : [],
      ),
    );
    expect(ratios.length).toBeGreaterThan(0);
    for (const r of ratios) expect(r).toBeCloseTo(ratios[0] ?? 0, 1);
    // The text alternative: the SVG is an image with a title and a summary, and the numbers are a table.
    expect(await chart.getAttribute('role')).toBe('img');
    expect(await chart.locator('desc').textContent()).toContain(`${sum('succeeded')} succeeded`);
    await main().getByText('Show the numbers').click();
    expect(await main().locator('table.health-table tbody tr').count()).toBe(24);
    await main().getByText('Show the numbers').click();
    // The axis ends carry their dates in the page's one format: the window's start and its end,
    // or now while the last bucket is still filling, never a time still to come.
    const start = (await chart.locator('[data-axis="start"]').textContent()) ?? '';
    const end = (await chart.locator('[data-axis="end"]').textContent()) ?? '';
    expect(start).toMatch(TIME_FORMAT);
    expect(end).toMatch(TIME_FORMAT);
    const utc = (text: string) => Date.parse(`${text.slice(0, 10)}T${text.slice(11, 19)}Z`);
    expect(utc(end)).toBeLessThanOrEqual(Date.now());
    expect(utc(end) - utc(start)).toBeGreaterThanOrEqual(23 * 3_600_000);
    expect(utc(start)).toBe(Date.parse(expected[0]?.start ?? ''));
    // The chart spans its card (less the card's padding), not half of it.
    const widths = await chart.evaluate((el) => ({
      chart: el.getBoundingClientRect().width,
      card: el.closest('figure')?.clientWidth ?? 0,
    }));
    expect(widths.chart).toBeGreaterThan(widths.card * 0.9);
    // The Since input is styled like every other field.
    const since = main().getByLabel('Since', { exact: true });
    expect(await since.evaluate((el) => getComputedStyle(el).borderTopLeftRadius)).not.toBe('0px');
    await chart.scrollIntoViewIfNeeded();
    if (UPDATE_DOCS) await writeFile(DOCS_HEALTH_SCREENSHOT, await page.screenshot({ fullPage: true }));
    if (SCREENSHOTS) {
      await page.screenshot({
        path: new URL('laptop-endpoint-health-chart.png', ARTIFACTS).pathname,
        fullPage: false,
      });
    }
    await shoot('endpoint-health');

    // Recover since...: the form answers how many deliveries went back to the queue.
    // A time the page cannot read is refused there, before any request.
    await main().getByLabel('Since', { exact: true }).fill('yesterday');
    await main().getByRole('button', { name: 'Recover', exact: true }).click();
    await expect.poll(() => main().getByRole('alert').textContent()).toContain('2026-11-27 09:42:26 UTC');
    await main().getByLabel('Since', { exact: true }).fill('2020-01-01 00:00:00 UTC');
    await main().getByRole('button', { name: 'Recover', exact: true }).click();
    await expect
      .poll(() => main().getByRole('status').textContent())
      .toMatch(/^\d+ deliver(y|ies) re-queued\.$/);
  });

  it('edits an endpoint filter, shows the server refusing a bad one, and sends a test event that lands', {
    timeout: 60_000,
  }, async () => {
    receiver.healthy = true;
    await page.goto(`${server.url}/dashboard#/endpoints`);
    const row = main().locator(`tr[data-id="${endpointId}"]`);
    await row.getByRole('button', { name: /^Edit / }).click();
    const filter = page.getByLabel(/^Filter/);
    // Not JSON: refused in the page, before any request.
    await filter.fill('{ "data.object.plan": ');
    await main().getByRole('button', { name: 'Save changes' }).click();
    await expect
      .poll(() => main().getByRole('alert').textContent())
      .toContain('The filter is not valid JSON');
    expect(await filter.getAttribute('aria-invalid')).toBe('true');
    // JSON the server refuses: its validation error names the place.
    await saveRefusedFilter(page);
    await shoot('endpoint-filter-error');
    // A valid filter (with a real null, which must never show as stray text).
    const valid = { 'data.object.plan': { $in: ['pro', 'team'] }, 'data.object.canceledAt': null };
    await filter.fill(JSON.stringify(valid, null, 2));
    await main().getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => row.locator('.filter-summary summary').textContent()).toBe('Filtered');
    expect((await api('GET', `/webhook-endpoints/${endpointId}`)).filter).toEqual(valid);
    await row.locator('.filter-summary summary').click();
    await shoot('endpoints-filtered');

    // The endpoint page shows the filter and sends a test event, following its attempt.
    await page.goto(`${server.url}/dashboard#/endpoints/${endpointId}`);
    await main().getByRole('heading', { name: 'Endpoint health', level: 1 }).waitFor();
    await expect.poll(() => main().locator('.filter-slot pre.json-block').textContent()).toContain('"$in"');
    const before = receiver.receipts.length;
    const landed = await sendTestEvent(page, 'subscription.created');
    await expect
      .poll(() => main().locator('.test-attempts li').first().textContent())
      .toMatch(/^HTTP 200 in \d+ ms$/);
    const link = await landed.getByRole('link').getAttribute('href');
    expect(link).toMatch(/^#\/deliveries\/dlv_/);
    const delivery = await api('GET', `/deliveries/${String(link).split('/').pop()}`);
    expect(delivery).toMatchObject({
      endpoint: endpointId,
      eventType: 'subscription.created',
      status: 'succeeded',
    });
    const event = await api('GET', `/events/${String(delivery.event)}`);
    expect(event.test).toBe(true);
    expect(receiver.receipts.slice(before).some((r) => r.webhookId === delivery.event && r.verified)).toBe(
      true,
    );
    await shoot('endpoint-test-event');
    // Leave the endpoint as the later cases expect it: no filter.
    await api('PATCH', `/webhook-endpoints/${endpointId}`, { filter: null });
  });

  it('lists events and notifications', async () => {
    const nav = page.getByRole('navigation', { name: 'Dashboard' });
    await nav.getByRole('link', { name: 'Events' }).click();
    await main().getByRole('heading', { name: 'Events', level: 1 }).waitFor();
    await main().getByRole('row').filter({ hasText: 'subscription.created' }).first().waitFor();
    await shoot('events');

    await nav.getByRole('link', { name: 'Notifications' }).click();
    await main().getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
    await main()
      .getByText(/Showing \d+|No notifications/)
      .waitFor();
    await shoot('notifications');
  });

  it('pages through a long list with the cursor', async () => {
    for (let i = 0; i < 21; i += 1) {
      const created = await api('POST', '/webhook-endpoints', {
        url: `${receiver.url}/extra-${i}`,
        eventTypes: ['order.refunded'],
        description: `Extra endpoint ${i}`,
      });
      if (i === 0) extra = { id: String(created.id), secret: String(created.secret) };
    }
    await page
      .getByRole('navigation', { name: 'Dashboard' })
      .getByRole('link', { name: 'Endpoints' })
      .click();
    const rows = main().locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(20);
    await main().getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => rows.count()).toBe(22);
    await expect.poll(() => main().getByRole('button', { name: 'Load more' }).isHidden()).toBe(true);
    const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));
    expect(new Set(ids).size).toBe(22);
  });

  it('rotates a secret, edits, disables, enables and deletes an endpoint (the delete by keyboard)', async () => {
    const row = main().locator(`tr[data-id="${extra.id}"]`);
    const rotated = await rotateSecretOf(page, row);
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(extra.secret);
    await shoot('endpoint-rotated');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.content()).not.toContain(rotated);

    await row.getByRole('button', { name: /^Edit / }).click();
    await page.getByLabel('Description').fill('Renamed by the dashboard');
    await page.getByRole('checkbox', { name: 'subscription.updated' }).check();
    expect(await row.textContent()).toContain('unordered');
    await page.getByLabel('Ordering', { exact: true }).selectOption('per-resource');
    await main().getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => row.textContent()).toContain('Renamed by the dashboard');
    expect(await row.textContent()).toContain('subscription.updated');
    expect(await row.textContent()).toContain('ordered per resource');
    const ordered = await fetch(`${server.url}/v1/webhook-endpoints/${extra.id}`, {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    expect(((await ordered.json()) as { ordering: string }).ordering).toBe('per-resource');

    await row.getByRole('button', { name: /^Disable / }).click();
    await expect.poll(() => row.locator('.badge').textContent()).toBe('disabled');
    await row.getByRole('button', { name: /^Enable / }).click();
    await expect.poll(() => row.locator('.badge').textContent()).toBe('active');

    await row.getByRole('button', { name: /^Delete / }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Delete this endpoint?' });
    await dialog.waitFor();
    await shoot('endpoint-delete-dialog', false);
    // Cancel has the focus first, so a stray Enter never deletes.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => row.count()).toBe(0);
    const gone = await fetch(`${server.url}/v1/webhook-endpoints/${extra.id}`, {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    expect(gone.status).toBe(404);
    await gone.arrayBuffer();
  });

  it('serves an icon at /favicon.ico', async () => {
    const res = await fetch(`${server.url}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(await res.text()).toMatch(/^<svg /);
  });

  it('titles /docs as the server’s API and says there how to get a key', async () => {
    const html = await (await fetch(`${server.url}/docs`)).text();
    expect(html).toContain('<title>Holdfast reference server API</title>');
    expect(html).not.toMatch(/API reference<\/title>/);
    expect(html).toContain('id="getting-a-key"');
    expect(html).toContain('keys:create');
  });

  it('walked every view checking for stray text', () => {
    for (const view of [
      '#/endpoints',
      '#/deliveries',
      '#/dead-letters',
      '#/deliveries/:id',
      '#/events',
      '#/events/:id',
      '#/endpoints/:id',
      '#/notifications',
    ]) {
      expect([...walked], view).toContain(view);
    }
  });

  it('signs out, forgetting the key, and never leaked it', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(consoleLines.filter((line) => line.includes(KEY))).toEqual([]);
    expect(foreignRequests).toEqual([]);
    await shoot('sign-in');
  });
});
