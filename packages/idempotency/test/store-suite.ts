import { isProblemError, type ProblemError, problem } from '@holdfast/problem-details';
import { describe, expect, it } from 'vitest';
import {
  type HandlerResult,
  type IdempotencyStore,
  type IdempotentRequest,
  MIN_RETENTION_MS,
  requestFingerprint,
  runIdempotent,
} from '../src/index';

/** A clock the test moves by hand. */
export function manualClock(start = Date.parse('2026-11-22T12:00:00.000Z')) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

export function deferred<T = void>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

export async function problemOf(run: Promise<unknown>): Promise<ProblemError> {
  try {
    await run;
  } catch (error) {
    if (isProblemError(error)) return error;
    throw error;
  }
  throw new Error('expected a problem');
}

let sequence = 0;
/** A key no other test uses (the PostgreSQL store is shared by the whole file). */
export function freshKey(): string {
  sequence += 1;
  return `key-${sequence}-${Math.random().toString(36).slice(2)}`;
}

export const LEASE = 5_000;

/**
 * The behaviour every store must show, through the plain flow (`runIdempotent`). Run once
 * per store: in memory and on PostgreSQL.
 */
export function storeBehaviour(name: string, getStore: () => IdempotencyStore): void {
  describe(`${name}: the behavioural suite`, () => {
    const clock = manualClock();
    const options = { leaseMs: LEASE, now: clock.now };
    const request = (
      key: string | null,
      body: unknown = { amount: 500, currency: 'EUR' },
    ): IdempotentRequest => ({
      key,
      account: 'acct_1',
      method: 'POST',
      path: '/v1/payments',
      body,
    });
    const counter = () => {
      let runs = 0;
      return {
        get runs() {
          return runs;
        },
        handler:
          (result: HandlerResult = created()) =>
          () => {
            runs += 1;
            return result;
          },
      };
    };
    const created = (): HandlerResult => ({
      status: 201,
      headers: {
        Location: '/v1/payments/pay_1',
        ETag: '"v1"',
        'Set-Cookie': 'session=secret',
        'Request-Id': 'req_first',
      },
      body: { id: 'pay_1', amount: 500 },
    });

    it('runs the first request and replays it: status, allowlisted headers, body, Idempotent-Replayed', async () => {
      const store = getStore();
      const key = freshKey();
      const count = counter();
      const first = await runIdempotent(store, request(key), count.handler(), options);
      expect(first.status).toBe(201);
      expect(first.headers.get('Set-Cookie')).toBe('session=secret');
      expect(first.headers.get('Idempotent-Replayed')).toBeNull();
      const again = await runIdempotent(store, request(key), count.handler(), options);
      expect(count.runs).toBe(1);
      expect(again.status).toBe(201);
      expect(again.headers.get('Idempotent-Replayed')).toBe('true');
      expect(again.headers.get('Location')).toBe('/v1/payments/pay_1');
      expect(again.headers.get('ETag')).toBe('"v1"');
      expect(again.headers.get('Content-Type')).toBe('application/json');
      expect(again.headers.get('Set-Cookie')).toBeNull();
      expect(again.headers.get('Request-Id')).toBeNull();
      expect(await again.json()).toEqual({ id: 'pay_1', amount: 500 });
    });

    it('treats a bare key and its Structured Field string as the same key', async () => {
      const store = getStore();
      const key = freshKey();
      const count = counter();
      await runIdempotent(store, request(key), count.handler(), options);
      const quoted = await runIdempotent(store, request(`"${key}"`), count.handler(), options);
      expect(quoted.headers.get('Idempotent-Replayed')).toBe('true');
      expect(count.runs).toBe(1);
    });

    it('ignores key order and whitespace of the body (canonical JSON)', async () => {
      const store = getStore();
      const key = freshKey();
      const count = counter();
      await runIdempotent(
        store,
        request(key, JSON.parse('{"amount":500,"currency":"EUR"}')),
        count.handler(),
        options,
      );
      const reordered = JSON.parse('{ "currency" : "EUR",\n "amount" : 500 }');
      const again = await runIdempotent(store, request(key, reordered), count.handler(), options);
      expect(again.headers.get('Idempotent-Replayed')).toBe('true');
      expect(count.runs).toBe(1);
    });

    it('answers 422 idempotency_key_reused for another body, path or method, and runs nothing', async () => {
      const store = getStore();
      const key = freshKey();
      const count = counter();
      await runIdempotent(store, request(key), count.handler(), options);
      const variants: IdempotentRequest[] = [
        request(key, { amount: 501, currency: 'EUR' }),
        { ...request(key), path: '/v1/orders' },
        { ...request(key), method: 'PUT' },
        { ...request(key), body: undefined },
      ];
      for (const variant of variants) {
        const error = await problemOf(runIdempotent(store, variant, count.handler(), options));
        expect([error.status, error.code]).toEqual([422, 'idempotency_key_reused']);
      }
      expect(count.runs).toBe(1);
    });

    it('scopes keys to the account', async () => {
      const store = getStore();
      const key = freshKey();
      const count = counter();
      await runIdempotent(store, request(key), count.handler(), options);
      const other = await runIdempotent(
        store,
        { ...request(key), account: 'acct_2' },
        count.handler(),
        options,
      );
      expect(other.headers.get('Idempotent-Replayed')).toBeNull();
      expect(count.runs).toBe(2);
    });

    it('answers 409 with Retry-After while the first runs, and 422 (checked first) for another request', async () => {
      const store = getStore();
      const key = freshKey();
      const gate = deferred();
      const started = deferred();
      const first = runIdempotent(
        store,
        request(key),
        async () => {
          started.resolve();
          await gate.promise;
          return created();
        },
        options,
      );
      await started.promise;
      const busy = await problemOf(runIdempotent(store, request(key), () => created(), options));
      expect([busy.status, busy.code, busy.retryAfter]).toEqual([409, 'idempotency_key_in_use', 1]);
      expect(busy.toResponse().headers.get('Retry-After')).toBe('1');
      const changed = await problemOf(
        runIdempotent(store, request(key, { amount: 1 }), () => created(), options),
      );
      expect([changed.status, changed.code]).toEqual([422, 'idempotency_key_reused']);
      gate.resolve();
      expect((await first).status).toBe(201);
      const after = await runIdempotent(store, request(key), () => created(), options);
      expect(after.headers.get('Idempotent-Replayed')).toBe('true');
    });

    it('renews the lease of a slow handler that is alive, so its key is not taken over', async () => {
      const real = getStore();
      const key = freshKey();
      // The renewal runs on a timer, every third of the lease; the times it writes come from a
      // clock moved by hand. The store is the real one, watched: each renewal the handler's
      // timer makes is seen with the lease it set, once the store has it.
      const own = manualClock();
      const leaseMs = 150;
      const watched = { leaseMs, now: own.now };
      const renewedTo: number[] = [];
      let renewed = () => {};
      const store: IdempotencyStore = {
        claim: (input) => real.claim(input),
        complete: (held, response, expiresAt) => real.complete(held, response, expiresAt),
        async extend(held, lockedUntil) {
          const holds = await real.extend(held, lockedUntil);
          renewedTo.push(lockedUntil.getTime());
          renewed();
          return holds;
        },
        release: (held) => real.release(held),
        purge: (options) => real.purge(options),
      };
      const renewalTo = (until: number) =>
        new Promise<void>((resolve) => {
          renewed = () => {
            if (renewedTo.some((at) => at >= until)) resolve();
          };
          renewed();
        });
      const start = own.now();
      const count = counter();
      const gate = deferred();
      const running = deferred();
      const slow = runIdempotent(
        store,
        request(key),
        async () => {
          running.resolve();
          await gate.promise;
          return count.handler()();
        },
        watched,
      );
      await running.promise;
      // Within the first lease, then a renewal from there: the key is held past the first lease.
      own.advance(leaseMs - 50);
      await renewalTo(start + 2 * leaseMs - 50);
      own.advance(100);
      const busy = await problemOf(runIdempotent(store, request(key), count.handler(), watched));
      expect(busy.code).toBe('idempotency_key_in_use');
      gate.resolve();
      expect((await slow).status).toBe(201);
      const replay = await runIdempotent(store, request(key), count.handler(), watched);
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
      expect(count.runs).toBe(1);
    });

    it('does not store a 5xx: the key is released and the retry runs', async () => {
      const store = getStore();
      const key = freshKey();
      const count = counter();
      const failed = await runIdempotent(
        store,
        request(key),
        count.handler({ status: 503, body: { down: true } }),
        options,
      );
      expect(failed.status).toBe(503);
      const retried = await runIdempotent(store, request(key), count.handler(), options);
      expect(retried.status).toBe(201);
      expect(retried.headers.get('Idempotent-Replayed')).toBeNull();
      expect(count.runs).toBe(2);
    });

    it('does not store a crash: the error propagates, the key is released', async () => {
      const store = getStore();
      const key = freshKey();
      await expect(
        runIdempotent(
          store,
          request(key),
          () => {
            throw new Error('boom');
          },
          options,
        ),
      ).rejects.toThrow('boom');
      const retried = await runIdempotent(store, request(key), () => created(), options);
      expect(retried.headers.get('Idempotent-Replayed')).toBeNull();
    });

    it('stores a returned 4xx and a thrown 4xx problem; the replayed problem carries the new requestId', async () => {
      const store = getStore();
      const returned = freshKey();
      await runIdempotent(store, request(returned), () => ({ status: 404, body: { gone: true } }), options);
      const again = await runIdempotent(store, request(returned), () => created(), options);
      expect([again.status, await again.json()]).toEqual([404, { gone: true }]);

      const thrown = freshKey();
      const refused = problem('unprocessable', { detail: 'Only 300 left.' });
      const error = await problemOf(
        runIdempotent(
          store,
          { ...request(thrown), requestId: 'req_first' },
          () => {
            throw refused;
          },
          options,
        ),
      );
      expect(error).toBe(refused);
      const replay = await runIdempotent(
        store,
        { ...request(thrown), requestId: 'req_second' },
        () => created(),
        options,
      );
      expect(replay.status).toBe(422);
      expect(replay.headers.get('Content-Type')).toBe('application/problem+json');
      expect(await replay.json()).toMatchObject({
        code: 'unprocessable',
        instance: '/v1/payments',
        requestId: 'req_second',
      });
    });

    it('frees a key held by a dead process after the lease, not before', async () => {
      const store = getStore();
      const key = freshKey();
      const fingerprint = await requestFingerprint(request(key));
      const now = new Date(clock.now());
      await store.claim({
        account: 'acct_1',
        key,
        fingerprint,
        token: 'dead-process',
        now,
        lockedUntil: new Date(now.getTime() + LEASE),
        expiresAt: new Date(now.getTime() + MIN_RETENTION_MS),
      });
      clock.advance(LEASE - 1);
      const busy = await problemOf(runIdempotent(store, request(key), () => created(), options));
      expect(busy.code).toBe('idempotency_key_in_use');
      clock.advance(1);
      const taken = await runIdempotent(store, request(key), () => created(), options);
      expect(taken.status).toBe(201);
      expect(taken.headers.get('Idempotent-Replayed')).toBeNull();
      // The dead attempt can no longer store or release anything.
      expect(
        await store.complete(
          { account: 'acct_1', key, token: 'dead-process' },
          { status: 200, headers: {}, body: null },
          now,
        ),
      ).toBe(false);
      await store.release({ account: 'acct_1', key, token: 'dead-process' });
      const replay = await runIdempotent(store, request(key), () => created(), options);
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    });

    it('keeps answers for the retention period, then runs again; purge deletes what expired', async () => {
      const store = getStore();
      const key = freshKey();
      const count = counter();
      await runIdempotent(store, request(key), count.handler(), options);
      clock.advance(MIN_RETENTION_MS - 1);
      await runIdempotent(store, request(key), count.handler(), options);
      expect(count.runs).toBe(1);
      expect(await store.purge({ now: new Date(clock.now()), batchSize: 2 })).toBeGreaterThanOrEqual(0);
      const replay = await runIdempotent(store, request(key), count.handler(), options);
      expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
      clock.advance(1);
      const purged = await store.purge({ now: new Date(clock.now()), batchSize: 2 });
      expect(purged).toBeGreaterThanOrEqual(1);
      const fresh = await runIdempotent(store, request(key), count.handler(), options);
      expect(fresh.headers.get('Idempotent-Replayed')).toBeNull();
      expect(count.runs).toBe(2);
    });

    it('answers 400 for a missing required key or a malformed one, and runs every keyless request', async () => {
      const store = getStore();
      const count = counter();
      const missing = await problemOf(
        runIdempotent(store, { ...request(null), required: true }, count.handler(), options),
      );
      expect([missing.status, missing.code]).toEqual([400, 'idempotency_key_required']);
      for (const bad of ['', 'a b', '"unterminated', 'x'.repeat(256), `"${'x'.repeat(256)}"`, 'é']) {
        const error = await problemOf(runIdempotent(store, request(bad), count.handler(), options));
        expect([error.status, error.code]).toEqual([400, 'validation_failed']);
        expect(error.errors[0]?.field).toBe('Idempotency-Key');
      }
      await runIdempotent(store, request(null), count.handler(), options);
      await runIdempotent(store, request(null), count.handler(), options);
      expect(count.runs).toBe(2);
      const longest = await runIdempotent(
        store,
        request(`${'k'.repeat(250)}${freshKey()}`.slice(-255)),
        count.handler(),
        options,
      );
      expect(longest.status).toBe(201);
    });
  });
}
