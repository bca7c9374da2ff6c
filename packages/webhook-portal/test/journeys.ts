import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { expect, it } from 'vitest';

/**
 * The portal's browser journeys, run against every host that mounts it (the reference server
 * signed in with an API key, the Express example opened with a portal session): an endpoint
 * created, a test event sent and seen in the attempt log, a dead delivery replayed, recovery,
 * a secret rotated, a filter edited with the server's error shown, and every page at 800 px
 * without sideways scrolling. Also the pieces the hosts' own browser tests share: the local
 * receiver, Chromium, polling and the layout check.
 */

export const CHROMIUM = '/usr/bin/chromium';
export const LAPTOP = { width: 1280, height: 800 };
/** The width of a portal embedded in another product's page. */
export const EMBEDDED = { width: 800, height: 800 };

/** Debian's Chromium through playwright-core, headless, quiet. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * What a person would see as broken in the page at its current width, as sentences (empty when
 * none). Runs in the page: the page is wider than the viewport, a table is wider than its frame, a
 * time is written in another format (or by a locale-formatted date picker), a URL wraps inside one
 * of its parts, row actions stack more than two lines high. With `phone`, the last two are not
 * checked: on a phone a long URL part may break anywhere, and actions stack in a card.
 */
export function layoutProblems({ phone, timeFormat }: { phone: boolean; timeFormat: string }): string[] {
  const problems: string[] = [];
  const root = document.documentElement;
  if (root.scrollWidth !== window.innerWidth)
    problems.push(`the page is ${root.scrollWidth} px wide in a ${window.innerWidth} px viewport`);
  for (const wrap of document.querySelectorAll<HTMLElement>('.table-wrap')) {
    const table = wrap.querySelector('table');
    if (table !== null && !table.hidden && table.offsetWidth > wrap.clientWidth)
      problems.push(`a table is ${table.offsetWidth} px wide in its ${wrap.clientWidth} px frame`);
  }
  for (const el of document.querySelectorAll('time, [data-axis], table.health-table tbody th')) {
    const text = el.textContent ?? '';
    if (!new RegExp(timeFormat).test(text)) problems.push(`a time reads "${text}"`);
  }
  for (const input of document.querySelectorAll('input[type="datetime-local"], input[type="date"]'))
    problems.push(`#${input.id} is a date picker in the browser's own format`);
  const copy = document.body.cloneNode(true);
  if (copy instanceof HTMLElement) {
    for (const block of copy.querySelectorAll('pre.json-block, pre.body-prefix')) block.remove();
    const month = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
    const other = new RegExp(
      `\\b${month} \\d|\\d ${month}\\b|\\b\\d{1,2}/\\d{1,2}/\\d{2,4}\\b|\\d:\\d{2}(?::\\d{2})? ?[AP]M\\b`,
    ).exec(copy.textContent ?? '');
    if (other !== null) problems.push(`a time in another format: "${other[0]}"`);
  }
  if (phone) return problems;
  const lines = (rects: Iterable<DOMRect>): number =>
    new Set([...rects].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
  for (const url of document.querySelectorAll('.url')) {
    for (const node of url.childNodes) {
      if (node.nodeType !== Node.TEXT_NODE) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      if (lines(range.getClientRects()) > 1)
        problems.push(`the URL part "${node.textContent}" wraps mid-word`);
    }
  }
  for (const actions of document.querySelectorAll('.row-actions')) {
    const high = lines([...actions.children].map((c) => c.getBoundingClientRect()));
    if (high > 2) problems.push(`row actions stacked ${high} lines high`);
  }
  return problems;
}

/** The portal's one time format (values.js `formatTime`), on every page and the chart's axis. */
export const TIME_FORMAT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/;

export interface Receipt {
  webhookId: string | undefined;
  answered: number;
  verified: boolean;
}

/** A local receiver that answers 500 until it is switched healthy, then verifies and answers 200. */
export interface Receiver {
  url: string;
  healthy: boolean;
  secret: string | undefined;
  receipts: Receipt[];
  close(): Promise<void>;
}

function headerRecord(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') out[name] = value;
    else if (Array.isArray(value)) out[name] = value.join(', ');
  }
  return out;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    healthy: false,
    secret: undefined,
    receipts: [],
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = headerRecord(req.headers);
      const webhookId = headers['webhook-id'];
      if (!receiver.healthy) {
        receiver.receipts.push({ webhookId, answered: 500, verified: false });
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end('receiver down: simulated outage');
        return;
      }
      let verified = false;
      try {
        if (receiver.secret !== undefined) {
          new Webhook(receiver.secret).verify(Buffer.concat(chunks).toString('utf8'), headers);
          verified = true;
        }
      } catch {
        verified = false;
      }
      const answered = verified ? 200 : 401;
      receiver.receipts.push({ webhookId, answered, verified });
      res.writeHead(answered, { 'Content-Type': 'text/plain' });
      res.end(verified ? 'ok: received' : 'signature did not verify');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no TCP address');
  receiver.url = `http://127.0.0.1:${address.port}/webhooks`;
  receiver.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    });
  return receiver;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Repeats `refresh` until `check` holds: the UI polls the API the way a person presses Refresh. */
export async function until(
  what: string,
  check: () => Promise<boolean>,
  refresh: () => Promise<void>,
  timeoutMs = 45_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await refresh();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A JSON client of an API under `base` with a bearer token: the body of a 2xx answer, else it throws
 * with the status and the problem.
 */
export function bearerApi(
  base: () => string,
  token: string,
): (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>> {
  return async (method, path, body) => {
    const res = await fetch(`${base()}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json: unknown = res.status === 204 ? {} : await res.json();
    if (!res.ok || !isRecord(json))
      throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

/**
 * Rotates the secret of the endpoint in `row` through its confirmation dialog, and reads the new
 * secret from the panel that shows it once.
 */
export async function rotateSecretOf(page: Page, row: Locator): Promise<string> {
  await row.getByRole('button', { name: /^Rotate secret of / }).click();
  await page
    .getByRole('dialog', { name: 'Rotate the signing secret?' })
    .getByRole('button', { name: 'Rotate secret' })
    .click();
  const secretField = page.getByRole('textbox', { name: 'Signing secret' });
  await secretField.waitFor();
  return secretField.inputValue();
}

/**
 * On an endpoint's page, sends a test event of `eventType` and waits for it to succeed: the
 * status line that follows it, with the link to its delivery.
 */
export async function sendTestEvent(page: Page, eventType: string): Promise<Locator> {
  const main = page.getByRole('main');
  const type = main.getByLabel('Event type');
  await expect.poll(() => type.locator('option').allTextContents()).toContain(eventType);
  await type.selectOption(eventType);
  await main.getByRole('button', { name: 'Send test event' }).click();
  const landed = main.getByRole('status').filter({ hasText: 'Test delivery' });
  await expect.poll(() => landed.locator('.badge').textContent(), { timeout: 30_000 }).toBe('succeeded');
  return landed;
}

/**
 * In the open endpoint form, saves a filter the server refuses (`$regex` is no operator of it)
 * and waits for the error that names the place, with its HTTP status.
 */
export async function saveRefusedFilter(page: Page): Promise<void> {
  const main = page.getByRole('main');
  await page.getByLabel(/^Filter/).fill('{ "data.object.plan": { "$regex": "^pro" } }');
  await main.getByRole('button', { name: 'Save changes' }).click();
  await expect.poll(() => main.getByRole('alert').textContent()).toContain('filter.data.object.plan.$regex');
  expect(await main.getByRole('alert').textContent()).toMatch(/HTTP 400/);
}

/** In the dead letters, replays the delivery `id`: the notice that links to it. */
export async function replayFromDeadLetters(page: Page, id: string): Promise<Locator> {
  const main = page.getByRole('main');
  await main.getByRole('button', { name: `Replay delivery ${id}` }).click();
  const notice = main.getByRole('status').filter({ hasText: 'Replay queued' });
  await notice.waitFor();
  return notice;
}

/** A host of the portal, as the journeys drive it. */
export interface JourneyHost {
  readonly page: Page;
  readonly receiver: Receiver;
  /** The portal page's URL, without a fragment (`http://127.0.0.1:3000/dashboard`). */
  readonly portalUrl: string;
  /** An event type the host sends and its test events offer. */
  readonly eventType: string;
  /** Opens the portal signed in as the journeys' account (an API key typed in, a portal session). */
  open(): Promise<void>;
  /** The management API as the same account; a status other than 2xx throws. */
  api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
}

/** What the journeys left behind, for a host's own cases after them. */
export interface JourneyState {
  endpointId: string;
  /** A delivery that died and was replayed. */
  replayedId: string;
  /** The event of a test delivery. */
  eventId: string;
}

/**
 * Registers the journeys as `it` cases of the calling `describe`, in order (each builds on the
 * one before). `host` is read when the cases run, after the caller's `beforeAll`.
 */
export function portalJourneys(host: () => JourneyHost): JourneyState {
  const state: JourneyState = { endpointId: '', replayedId: '', eventId: '' };
  const main = (): Locator => host().page.getByRole('main');
  const attemptRows = (status: number): Locator =>
    main()
      .locator('tbody tr')
      .filter({
        has: host().page.locator('td[data-label="HTTP status"]', { hasText: new RegExp(`^${status}$`) }),
      });
  const refresh = async (): Promise<void> => {
    await main().getByRole('button', { name: 'Refresh', exact: true }).click();
  };
  /** A test delivery sent while the receiver is down, once it is dead. */
  const deadDelivery = async (): Promise<string> => {
    const { api, receiver, eventType } = host();
    receiver.healthy = false;
    const sent = await api('POST', `/webhook-endpoints/${state.endpointId}/test`, { eventType });
    const id = String(sent.id);
    await until(
      `delivery ${id} to die`,
      async () => (await api('GET', `/deliveries/${id}`)).status === 'dead',
      async () => {},
    );
    return id;
  };

  it('creates an endpoint for the receiver and shows its secret once', async () => {
    const { page, receiver, eventType } = host();
    await host().open();
    await main().getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description').fill('Journeys receiver');
    await page.getByRole('checkbox', { name: eventType }).check();
    await main().getByRole('button', { name: 'Create endpoint' }).click();
    const secretField = page.getByRole('textbox', { name: 'Signing secret' });
    await secretField.waitFor();
    receiver.secret = await secretField.inputValue();
    expect(receiver.secret).toMatch(/^whsec_/);
    const row = main().getByRole('row').filter({ hasText: receiver.url });
    await row.waitFor();
    state.endpointId = (await row.getAttribute('data-id')) ?? '';
    expect(state.endpointId).toMatch(/^we_/);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.content()).not.toContain(receiver.secret);
    expect(await host().api('GET', `/webhook-endpoints/${state.endpointId}`)).toMatchObject({
      url: receiver.url,
      eventTypes: [eventType],
    });
  });

  it('sends a test event from the endpoint page and sees it in the attempt log', {
    timeout: 60_000,
  }, async () => {
    const { page, receiver, eventType, portalUrl } = host();
    receiver.healthy = true;
    await page.goto(`${portalUrl}#/endpoints/${state.endpointId}`);
    await main().getByRole('heading', { name: 'Endpoint health', level: 1 }).waitFor();
    const landed = await sendTestEvent(page, eventType);
    await landed.getByRole('link').click();
    await main().getByRole('heading', { name: 'Attempt log' }).waitFor();
    await until('the attempt in the log', async () => (await attemptRows(200).count()) === 1, refresh);
    expect(await attemptRows(200).textContent()).toContain('ok: received');
    const deliveryId = page.url().split('/').pop() ?? '';
    const delivery = await host().api('GET', `/deliveries/${deliveryId}`);
    expect(delivery).toMatchObject({ endpoint: state.endpointId, eventType, status: 'succeeded' });
    state.eventId = String(delivery.event);
    expect(receiver.receipts.some((r) => r.webhookId === state.eventId && r.verified)).toBe(true);
  });

  it('replays a dead delivery from the dead letters and sees it succeed', { timeout: 90_000 }, async () => {
    const { page, receiver, portalUrl } = host();
    const dead = await deadDelivery();
    await page.goto(`${portalUrl}#/dead-letters`);
    await main().getByRole('heading', { name: 'Dead letters', level: 1 }).waitFor();
    await until(
      'the dead row',
      async () => (await main().locator(`tr[data-id="${dead}"]`).count()) === 1,
      refresh,
    );
    receiver.healthy = true;
    const notice = await replayFromDeadLetters(page, dead);
    await notice.getByRole('link', { name: dead }).waitFor();
    expect(await main().locator(`tr[data-id="${dead}"]`).count()).toBe(0);
    await page.goto(`${portalUrl}#/deliveries/${dead}`);
    await main().getByRole('heading', { name: 'Attempt log' }).waitFor();
    await until(
      'the replayed attempt to succeed',
      async () => (await attemptRows(200).count()) === 1,
      refresh,
    );
    expect(await attemptRows(500).count()).toBeGreaterThanOrEqual(1);
    expect((await host().api('GET', `/deliveries/${dead}`)).status).toBe('succeeded');
    state.replayedId = dead;
  });

  it('recovers the dead deliveries since a time', { timeout: 90_000 }, async () => {
    const { page, receiver, portalUrl } = host();
    const dead = await deadDelivery();
    receiver.healthy = true;
    await page.goto(`${portalUrl}#/endpoints/${state.endpointId}`);
    await main().getByRole('heading', { name: 'Endpoint health', level: 1 }).waitFor();
    await main().getByLabel('Since', { exact: true }).fill('2020-01-01 00:00:00 UTC');
    await main().getByRole('button', { name: 'Recover', exact: true }).click();
    await expect
      .poll(() => main().getByRole('status').filter({ hasText: 're-queued' }).textContent())
      .toMatch(/^[1-9]\d* deliver(y|ies) re-queued\.$/);
    await until(
      'the recovered delivery to succeed',
      async () => (await host().api('GET', `/deliveries/${dead}`)).status === 'succeeded',
      async () => {},
    );
  });

  it('rotates the signing secret', async () => {
    const { page, receiver, portalUrl } = host();
    await page.goto(`${portalUrl}#/endpoints`);
    const rotated = await rotateSecretOf(page, main().locator(`tr[data-id="${state.endpointId}"]`));
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(receiver.secret);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.content()).not.toContain(rotated);
    // The receiver switches to the new secret: the next delivery verifies with it.
    receiver.secret = rotated;
  });

  it('edits the filter, showing the server refusing a bad one', async () => {
    const { page } = host();
    const row = main().locator(`tr[data-id="${state.endpointId}"]`);
    await row.getByRole('button', { name: /^Edit / }).click();
    await saveRefusedFilter(page);
    const valid = { 'data.object.plan': { $in: ['pro', 'team'] } };
    await page.getByLabel(/^Filter/).fill(JSON.stringify(valid));
    await main().getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => row.locator('.filter-summary summary').textContent()).toBe('Filtered');
    expect((await host().api('GET', `/webhook-endpoints/${state.endpointId}`)).filter).toEqual(valid);
    await host().api('PATCH', `/webhook-endpoints/${state.endpointId}`, { filter: null });
  });

  it('fits every page in an 800 px frame: nothing scrolls sideways', { timeout: 60_000 }, async () => {
    const { page, portalUrl } = host();
    await page.setViewportSize(EMBEDDED);
    for (const view of [
      '#/endpoints',
      `#/endpoints/${state.endpointId}`,
      '#/deliveries',
      '#/dead-letters',
      `#/deliveries/${state.replayedId}`,
      '#/events',
      `#/events/${state.eventId}`,
      '#/notifications',
    ]) {
      await page.goto(`${portalUrl}${view}`);
      await main().getByRole('heading', { level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await main().getByRole('alert').count(), `${view} shows an error`).toBe(0);
      const problems = await page.evaluate(layoutProblems, { phone: false, timeFormat: TIME_FORMAT.source });
      expect(problems, `${view} at 800 px`).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth === window.innerWidth)).toBe(
        true,
      );
    }
    await page.setViewportSize(LAPTOP);
  });

  return state;
}
