import parsePrometheusTextFormat, { type Family } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from './api-harness';
import { eventually, type Receiver, startReceiver } from './webhooks-harness';

// Issue 19, "Must show": the server started with HOLDFAST_METRICS_PORT serves the Prometheus
// exposition there (never on the public port); after requests, a rate-limit refusal, an
// idempotency replay and conflict, and a failing delivery, every family holds what happened.

let t: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  receiver.respond = () => ({ status: 500, body: 'down' });
  t = await startTestServer({
    HOLDFAST_METRICS_PORT: '0',
    HOLDFAST_ADDRESS_RATE_LIMIT: '2/60s',
    HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1',
    HOLDFAST_RETRY_SCHEDULE: '1s',
    HOLDFAST_DELIVERY_POLL: '50ms',
  });
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

/**
 * The exposition parsed twice: as served (families and their types), and with histograms read
 * as untyped, so each `_count` series keeps its labels (the parser merges a labelled
 * histogram's series into one).
 */
async function scrape(): Promise<Map<string, Family>> {
  const url = t.server.metricsUrl;
  if (!url) throw new Error('no metrics URL');
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  const families = new Map(parsePrometheusTextFormat(text).map((family) => [family.name, family]));
  // Read untyped, each series of a histogram is a run of lines: runs of one name are merged.
  for (const family of parsePrometheusTextFormat(
    text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'),
  )) {
    const known = families.get(family.name);
    if (!known) families.set(family.name, family);
    else if (known.type === 'UNTYPED')
      families.set(family.name, { ...known, metrics: [...known.metrics, ...family.metrics] });
  }
  return families;
}

/** The value of `name`'s series with `labels`; for a histogram, its observation count. */
function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const histogram = families.get(name)?.type === 'HISTOGRAM';
  const family = families.get(histogram ? `${name}_count` : name);
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return Number(sample?.value ?? Number.NaN);
}

it('serves /metrics on its own port only; the public port answers 404', async () => {
  expect(t.server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  expect(t.server.metricsUrl).not.toContain(t.url);
  const publicAnswer = await fetch(`${t.url}/metrics`);
  expect(publicAnswer.status).toBe(404);
  const other = await fetch(String(t.server.metricsUrl).replace('/metrics', '/v1/orders'));
  expect(other.status).toBe(404);
});

it('counts requests by route template, the refusals, idempotency outcomes and a failing delivery', async () => {
  const endpoint = await call(t.url, 'POST', '/v1/webhook-endpoints', {
    body: { url: `${receiver.url}/hook`, eventTypes: ['order.created'] },
  });
  expect(endpoint.status).toBe(201);
  const body = { currency: 'EUR', total: 1200, description: 'metrics' };
  const headers = { 'idempotency-key': `metrics-${Date.now()}` };
  const first = await call(t.url, 'POST', '/v1/orders', { body, headers });
  expect(first.status).toBe(201);
  expect(
    (await call(t.url, 'POST', '/v1/orders', { body, headers })).headers.get('idempotent-replayed'),
  ).toBe('true');
  expect((await call(t.url, 'POST', '/v1/orders', { body: { ...body, total: 1 }, headers })).status).toBe(
    422,
  );
  for (const id of [String(first.body.id), 'ord_doesnotexist000000']) {
    await call(t.url, 'GET', `/v1/orders/${id}`);
  }
  // Unknown keys spend their address's tokens (2 per minute here): the third is 429.
  const unknown = [];
  for (let i = 0; i < 3; i++)
    unknown.push(
      (await call(t.url, 'GET', '/v1/orders', { key: 'hf_test_unknownKey000000000000000' })).status,
    );
  expect(unknown).toEqual([401, 401, 429]);

  const families = await eventually(
    async () => {
      const scraped = await scrape();
      return value(scraped, 'holdfast_delivery_attempts_total', { outcome: 'failed' }) >= 1
        ? scraped
        : undefined;
    },
    20_000,
    'a failed delivery attempt counted',
  );

  // HTTP: by route template, never by id.
  expect(families.get('holdfast_http_requests_total')?.type).toBe('COUNTER');
  expect(
    value(families, 'holdfast_http_requests_total', {
      route: '/v1/orders/:id',
      method: 'GET',
      status: '200',
    }),
  ).toBe(1);
  expect(
    value(families, 'holdfast_http_requests_total', {
      route: '/v1/orders/:id',
      method: 'GET',
      status: '404',
    }),
  ).toBe(1);
  expect(
    value(families, 'holdfast_http_requests_total', { route: '/v1/orders', method: 'POST', status: '201' }),
  ).toBe(2);
  const routes = new Set(families.get('holdfast_http_requests_total')?.metrics.map((m) => m.labels?.route));
  expect([...routes].some((route) => route?.includes('ord_'))).toBe(false);
  expect(families.get('holdfast_http_request_duration_seconds')?.type).toBe('HISTOGRAM');
  expect(
    value(families, 'holdfast_http_request_duration_seconds', {
      route: '/v1/orders',
      method: 'POST',
      status: '201',
    }),
  ).toBe(2);
  // Refusals, replays and conflicts.
  expect(value(families, 'holdfast_rate_limit_refusals_total', { limiter: 'address' })).toBe(1);
  expect(value(families, 'holdfast_idempotency_total', { outcome: 'replayed' })).toBe(1);
  expect(value(families, 'holdfast_idempotency_total', { outcome: 'reused' })).toBe(1);
  // Deliveries: the failed attempt, its latency, and the queue gauges.
  expect(value(families, 'holdfast_delivery_attempts_total', { outcome: 'succeeded' })).toBe(0);
  expect(families.get('holdfast_delivery_attempt_duration_seconds')?.type).toBe('HISTOGRAM');
  expect(
    value(families, 'holdfast_delivery_attempt_duration_seconds', { outcome: 'failed' }),
  ).toBeGreaterThanOrEqual(1);
  for (const name of [
    'holdfast_deliveries_due',
    'holdfast_deliveries_in_flight',
    'holdfast_deliveries_dead',
    'holdfast_delivery_oldest_due_age_seconds',
  ]) {
    expect(families.get(name)?.type, name).toBe('GAUGE');
    expect(value(families, name), name).toBeGreaterThanOrEqual(0);
  }
  expect(families.get('holdfast_endpoint_concurrency_limit')?.type).toBe('GAUGE');

  // The retry (1 s later) fails too: the delivery is dead, and counted so. The gauge reads the
  // database when scraped, the counter moves when the worker's attempt hook runs: the gauge can
  // lead the counter by a moment, so wait for both.
  const dead = await eventually(
    async () => {
      const scraped = await scrape();
      return value(scraped, 'holdfast_deliveries_dead') >= 1 &&
        value(scraped, 'holdfast_delivery_attempts_total', { outcome: 'dead' }) >= 1
        ? scraped
        : undefined;
    },
    20_000,
    'the delivery dead',
  );
  expect(value(dead, 'holdfast_delivery_attempts_total', { outcome: 'dead' })).toBe(1);
  expect(value(dead, 'holdfast_delivery_attempts_total', { outcome: 'failed' })).toBe(1);
  expect(value(dead, 'holdfast_deliveries_due')).toBe(0);
});
