// The one driver every adopter service is run through, over real HTTP: what a client of the
// service does, then what the service's database says. Every service answers the same routes:
//   POST /v1/orders  { item: string, quantity: integer 1..1000 }, Idempotency-Key required
//   GET  /v1/orders  ?sort=&cursor=&limit=  ({ data, pageInfo }, keyset pages, signed cursors)
//   POST /hooks/orders  the receiver of the service's own webhooks (Standard Webhooks)
// and keeps its own two tables, `orders` and `received_orders` (one row per webhook its inbox
// processed), which the checks below read.
import pg from 'pg';

export interface Target {
  readonly name: string;
  readonly url: string; // http://127.0.0.1:<port>
  readonly key: string; // an API key the service created, all scopes
  readonly databaseUrl: string;
}

export interface Outcome {
  readonly passed: string[];
  readonly failed: string[];
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
  readonly text: string;
}

const PROBLEM = 'application/problem+json';

export async function drive(
  target: Target,
  options: { orders?: number; deliveryMs?: number } = {},
): Promise<Outcome> {
  const passed: string[] = [];
  const failed: string[] = [];
  const check = (label: string, ok: boolean, detail = '') => {
    if (ok) passed.push(label);
    else failed.push(detail === '' ? label : `${label}: ${detail}`);
  };
  const call = async (
    method: string,
    path: string,
    init: { key?: string | null; idempotencyKey?: string; body?: string } = {},
  ): Promise<Answer> => {
    const headers: Record<string, string> = {};
    const key = init.key === undefined ? target.key : init.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (init.idempotencyKey !== undefined) headers['idempotency-key'] = init.idempotencyKey;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${target.url}${path}`, { method, headers, body: init.body ?? null });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, headers: response.headers, body, text };
  };
  const isProblem = (answer: Answer, status: number, code?: string) =>
    answer.status === status &&
    (answer.headers.get('content-type') ?? '').startsWith(PROBLEM) &&
    (code === undefined || (answer.body as { code?: string } | undefined)?.code === code);
  const show = (answer: Answer) => `${answer.status} ${answer.text.slice(0, 300)}`;
  const create = (idempotencyKey: string, input: { item: string; quantity: number }) =>
    call('POST', '/v1/orders', { idempotencyKey, body: JSON.stringify(input) });
  const idOf = (answer: Answer) => (answer.body as { id?: string } | undefined)?.id;

  const pool = new pg.Pool({ connectionString: target.databaseUrl, max: 2 });
  try {
    // Authentication: no key, a made-up key.
    const anonymous = await call('GET', '/v1/orders', { key: null });
    check(
      'missing API key: 401 problem with a Bearer challenge',
      isProblem(anonymous, 401) && (anonymous.headers.get('www-authenticate') ?? '').startsWith('Bearer'),
      show(anonymous),
    );
    const forged = await call('GET', '/v1/orders', { key: `hf_live_${'A'.repeat(32)}` });
    check('unknown API key: 401 problem', isProblem(forged, 401), show(forged));

    // Request guards and validation: a body that is not JSON, one that breaks the schema.
    const broken = await call('POST', '/v1/orders', {
      idempotencyKey: crypto.randomUUID(),
      body: '{"item":',
    });
    check('malformed JSON: 400 invalid_json problem', isProblem(broken, 400, 'invalid_json'), show(broken));
    const invalid = await create(crypto.randomUUID(), { item: '', quantity: -1 });
    check(
      'bad body: 400 validation_failed problem',
      isProblem(invalid, 400, 'validation_failed'),
      show(invalid),
    );

    // Replay and reuse of one key.
    const key = crypto.randomUUID();
    const first = await create(key, { item: 'replayed', quantity: 2 });
    check(
      'POST /v1/orders: 201 with the order',
      first.status === 201 && idOf(first) !== undefined,
      show(first),
    );
    const again = await create(key, { item: 'replayed', quantity: 2 });
    check(
      'replay: same key twice gives the same answer, Idempotent-Replayed: true',
      again.status === 201 &&
        again.headers.get('idempotent-replayed') === 'true' &&
        again.text === first.text,
      `${show(again)} replayed=${again.headers.get('idempotent-replayed')}`,
    );
    const reused = await create(key, { item: 'replayed', quantity: 3 });
    check(
      'same key, another body: 422 idempotency_key_reused problem',
      isProblem(reused, 422, 'idempotency_key_reused'),
      show(reused),
    );

    // 20 concurrent requests with one key make one row; the ones that met it in flight (409)
    // are retried until they get the replay.
    const racing = crypto.randomUUID();
    const raceItem = `race-${racing}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => create(racing, { item: raceItem, quantity: 1 })),
    );
    const unexpected = answers.filter(
      (a) => a.status !== 201 && !isProblem(a, 409, 'idempotency_key_in_use'),
    );
    check(
      '20 concurrent same-key requests: each 201 or 409 idempotency_key_in_use',
      unexpected.length === 0,
      unexpected.map(show).join(' | '),
    );
    const ids = new Set(answers.filter((a) => a.status === 201).map(idOf));
    for (let attempt = 0; attempt < 50 && ids.size === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const retry = await create(racing, { item: raceItem, quantity: 1 });
      if (retry.status === 201) ids.add(idOf(retry));
    }
    const { rows: raced } = await pool.query<{ n: number }>(
      'select count(*)::int as n from orders where item = $1',
      [raceItem],
    );
    check(
      '20 concurrent same-key requests make one row and one answer',
      raced[0]?.n === 1 && ids.size === 1,
      `rows ${raced[0]?.n}, distinct ids ${ids.size}`,
    );

    // More orders, distinct keys, a few at a time.
    const wanted = options.orders ?? 25;
    for (let i = 0; i < wanted - 2; i += 5) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(5, wanted - 2 - i) }, (_, j) =>
          create(crypto.randomUUID(), { item: `item-${i + j}`, quantity: 1 + (((i + j) * 7) % 50) }),
        ),
      );
      for (const answer of batch)
        if (answer.status !== 201) check('POST /v1/orders: 201', false, show(answer));
    }
    const { rows: all } = await pool.query<{ id: string }>('select id from orders');
    const orderIds = new Set(all.map((row) => row.id));
    check(`the service holds ${wanted} orders`, orderIds.size === wanted, `${orderIds.size}`);

    // The list: every order once, in order, page by page; then the refusals.
    for (const [sort, field, direction] of [
      ['-createdAt', 'createdAt', -1],
      ['quantity', 'quantity', 1],
    ] as const) {
      const seen: { id: string; createdAt: string; quantity: number }[] = [];
      let cursor: string | null = null;
      let pages = 0;
      let bad: string | undefined;
      do {
        const page = await call(
          'GET',
          `/v1/orders?sort=${sort}&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        const body = page.body as
          | { data?: typeof seen; pageInfo?: { nextCursor: string | null } }
          | undefined;
        if (page.status !== 200 || !body?.data || !body.pageInfo) {
          bad = show(page);
          break;
        }
        seen.push(...body.data);
        cursor = body.pageInfo.nextCursor;
        pages++;
      } while (cursor !== null && pages < 100);
      const sorted = seen.every((row, i) => {
        const prev = seen[i - 1];
        if (prev === undefined) return true;
        const a = field === 'createdAt' ? Date.parse(prev.createdAt) : prev.quantity;
        const b = field === 'createdAt' ? Date.parse(row.createdAt) : row.quantity;
        return direction === 1 ? a <= b : a >= b;
      });
      const listed = new Set(seen.map((row) => row.id));
      check(
        `GET /v1/orders?sort=${sort}: every order once, sorted, over signed cursors`,
        bad === undefined &&
          sorted &&
          seen.length === orderIds.size &&
          [...orderIds].every((id) => listed.has(id)),
        bad ?? `listed ${seen.length} (${listed.size} distinct) of ${orderIds.size}, sorted ${sorted}`,
      );
    }
    const firstPage = await call('GET', '/v1/orders?limit=3');
    const next = (firstPage.body as { pageInfo?: { nextCursor?: string } } | undefined)?.pageInfo?.nextCursor;
    if (typeof next === 'string') {
      const at = Math.floor(next.length / 2);
      const tampered = `${next.slice(0, at)}${next[at] === 'A' ? 'B' : 'A'}${next.slice(at + 1)}`;
      const refused = await call('GET', `/v1/orders?limit=3&cursor=${encodeURIComponent(tampered)}`);
      check(
        'tampered cursor: 400 invalid_cursor problem',
        isProblem(refused, 400, 'invalid_cursor'),
        show(refused),
      );
    } else check('a first page of 3 has a next cursor', false, show(firstPage));
    const unknownSort = await call('GET', '/v1/orders?sort=colour');
    check(
      'unknown sort key: 400 invalid_sort problem',
      isProblem(unknownSort, 400, 'invalid_sort'),
      show(unknownSort),
    );

    // The receiver refuses what is not signed by the sender's secret.
    const unsigned = await fetch(`${target.url}/hooks/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      },
      body: '{"type":"order.created"}',
    });
    check('receiver: a forged signature is 401', unsigned.status === 401, `${unsigned.status}`);

    // Every order reaches the receiver as exactly one verified, processed webhook.
    const deadline = Date.now() + (options.deliveryMs ?? 60_000);
    let received: { order_id: string; n: number }[] = [];
    while (Date.now() < deadline) {
      received = (
        await pool.query<{ order_id: string; n: number }>(
          'select order_id, count(*)::int as n from received_orders group by order_id',
        )
      ).rows;
      if (received.length >= orderIds.size) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await new Promise((resolve) => setTimeout(resolve, 500)); // a duplicate would arrive now
    received = (
      await pool.query<{ order_id: string; n: number }>(
        'select order_id, count(*)::int as n from received_orders group by order_id',
      )
    ).rows;
    const once = received.filter((row) => row.n === 1 && orderIds.has(row.order_id)).length;
    const twice = received.filter((row) => row.n > 1).length;
    check(
      'every order reaches the receiver as exactly one verified, processed webhook',
      once === orderIds.size && twice === 0 && received.length === orderIds.size,
      `${once} of ${orderIds.size} once, ${twice} more than once, ${received.length - once - twice} unknown`,
    );
  } catch (error) {
    failed.push(
      `the driver stopped: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
  } finally {
    await pool.end();
  }
  return { passed, failed };
}
