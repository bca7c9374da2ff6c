import { isProblemError, problem } from '@holdfast/problem-details';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { HandlerResult, IdempotentRequest } from '../src/index';
import { deferred } from './store-suite';

/** How a handler ends: a stored answer (2xx, returned 4xx, thrown 4xx) or not (5xx, crash). */
export type Outcome = 'created' | 'returned4xx' | 'thrown4xx' | 'returned5xx' | 'crash';

export type Step =
  | { kind: 'send' | 'start'; key: number; body: number; outcome: Outcome }
  | { kind: 'finish'; pick: number };

const outcome = fc.constantFrom<Outcome>('created', 'returned4xx', 'thrown4xx', 'returned5xx', 'crash');
const request = (kind: 'send' | 'start') =>
  fc.record({ kind: fc.constant(kind), key: fc.nat(1), body: fc.nat(1), outcome });

/** Random interleavings: requests that finish at once, requests held in flight, and releases. */
export function steps(options: { interleave: boolean }): fc.Arbitrary<Step[]> {
  const step: fc.Arbitrary<Step> = options.interleave
    ? fc.oneof(
        request('send'),
        request('start'),
        fc.record({ kind: fc.constant('finish' as const), pick: fc.nat() }),
      )
    : request('send');
  return fc.array(step, { minLength: 1, maxLength: 14 });
}

/** What a client observes, reduced to what the model predicts. */
type Observed =
  | { kind: 'answer'; status: number; replayed: boolean; execution: number | null }
  | { kind: 'problem'; code: string; execution: number | null }
  | { kind: 'crash' };

/**
 * Runs one request through the flow under test. `handler` is the business part; it calls
 * `write(execution)` once it starts, where the atomic flow records a business row.
 */
export type Execute = (
  request: IdempotentRequest,
  handler: (write: (execution: number) => Promise<void>) => Promise<HandlerResult>,
) => Promise<Response>;

type KeyState =
  | { state: 'free' }
  | { state: 'running'; body: number }
  | { state: 'done'; body: number; answer: Observed };

function resultFor(outcome: Outcome, execution: number): HandlerResult {
  switch (outcome) {
    case 'created':
      return { status: 201, headers: { Location: `/v1/things/${execution}` }, body: { execution } };
    case 'returned4xx':
      return { status: 404, body: { execution } };
    case 'thrown4xx':
      throw problem('unprocessable', { detail: `execution ${execution}` });
    case 'returned5xx':
      return { status: 503, body: { execution } };
    case 'crash':
      throw new Error(`crash ${execution}`);
  }
}

/** The first-run answer the model expects for `outcome`. */
function firstAnswer(outcome: Outcome, execution: number): Observed {
  switch (outcome) {
    case 'created':
      return { kind: 'answer', status: 201, replayed: false, execution };
    case 'returned4xx':
      return { kind: 'answer', status: 404, replayed: false, execution };
    case 'thrown4xx':
      return { kind: 'problem', code: 'unprocessable', execution };
    case 'returned5xx':
      return { kind: 'answer', status: 503, replayed: false, execution };
    case 'crash':
      return { kind: 'crash' };
  }
}

function replayOf(answer: Observed): Observed {
  // A stored thrown problem comes back as a replayed response carrying the problem document.
  if (answer.kind === 'problem')
    return { kind: 'answer', status: 422, replayed: true, execution: answer.execution };
  if (answer.kind === 'answer') return { ...answer, replayed: true };
  return answer;
}

const stored = (outcome: Outcome) =>
  outcome === 'created' || outcome === 'returned4xx' || outcome === 'thrown4xx';

async function observe(response: Promise<Response>): Promise<Observed> {
  try {
    const answer = await response;
    const text = await answer.text();
    const body: unknown = text === '' ? null : JSON.parse(text);
    return {
      kind: 'answer',
      status: answer.status,
      replayed: answer.headers.get('Idempotent-Replayed') === 'true',
      execution: executionIn(body),
    };
  } catch (error) {
    if (isProblemError(error)) {
      const match = /^execution (\d+)$/.exec(error.detail);
      return { kind: 'problem', code: error.code, execution: match ? Number(match[1]) : null };
    }
    return { kind: 'crash' };
  }
}

function executionIn(body: unknown): number | null {
  if (typeof body !== 'object' || body === null) return null;
  if ('execution' in body && typeof body.execution === 'number') return body.execution;
  if ('detail' in body && typeof body.detail === 'string') {
    const match = /^execution (\d+)$/.exec(body.detail);
    return match ? Number(match[1]) : null;
  }
  return null;
}

/**
 * Drives `steps` through `execute` and checks every answer against the model: per key, free,
 * running (409 for the same request, 422 for another) or done (replay of the stored answer for
 * the same request, 422 for another). Returns the executions whose answer was stored (what
 * must have committed in the atomic flow) and the handler runs counted.
 */
export async function checkAgainstModel(
  steps: readonly Step[],
  execute: Execute,
  prefix: string,
): Promise<{ runs: number; expectedRuns: number; committed: number[] }> {
  const keys: KeyState[] = [{ state: 'free' }, { state: 'free' }];
  let runs = 0;
  let expectedRuns = 0;
  const committed: number[] = [];
  const inFlight: Array<{
    key: number;
    body: number;
    outcome: Outcome;
    release: () => void;
    answer: Promise<Observed>;
    execution: number;
  }> = [];

  const requestFor = (key: number, body: number): IdempotentRequest => ({
    key: `${prefix}-${key}`,
    account: 'acct_model',
    method: 'POST',
    path: '/v1/things',
    body: { body },
  });

  const expectFor = (key: number, body: number): Observed | 'runs' => {
    const state = keys[key] ?? { state: 'free' };
    if (state.state === 'free') return 'runs';
    if (state.body !== body) return { kind: 'problem', code: 'idempotency_key_reused', execution: null };
    if (state.state === 'running')
      return { kind: 'problem', code: 'idempotency_key_in_use', execution: null };
    return replayOf(state.answer);
  };

  const settle = (key: number, body: number, outcome: Outcome, execution: number) => {
    const answer = firstAnswer(outcome, execution);
    if (stored(outcome)) {
      keys[key] = { state: 'done', body, answer };
      // A thrown problem is stored, but its business writes roll back.
      if (outcome !== 'thrown4xx') committed.push(execution);
    } else {
      keys[key] = { state: 'free' };
    }
    return answer;
  };

  for (const step of steps) {
    if (step.kind === 'finish') {
      if (inFlight.length === 0) continue;
      const [held] = inFlight.splice(step.pick % inFlight.length, 1);
      if (!held) continue;
      held.release();
      const expected = settle(held.key, held.body, held.outcome, held.execution);
      expect(await held.answer).toEqual(expected);
      continue;
    }
    if (step.kind === 'start' && inFlight.length >= 2) continue;
    const expected = expectFor(step.key, step.body);
    const gate = deferred();
    const started = deferred<number>();
    const hold = step.kind === 'start';
    const answer = observe(
      execute(requestFor(step.key, step.body), async (write) => {
        runs += 1;
        const execution = runs;
        await write(execution);
        started.resolve(execution);
        if (hold) await gate.promise;
        return resultFor(step.outcome, execution);
      }),
    );
    if (expected !== 'runs') {
      expect(await answer).toEqual(expected);
      continue;
    }
    expectedRuns += 1;
    const first = await Promise.race([
      started.promise.then((execution) => ({ execution })),
      answer.then((observed) => ({ observed })),
    ]);
    if ('observed' in first)
      throw new Error(`expected the handler to run, got ${JSON.stringify(first.observed)}`);
    const { execution } = first;
    if (hold) {
      keys[step.key] = { state: 'running', body: step.body };
      inFlight.push({
        key: step.key,
        body: step.body,
        outcome: step.outcome,
        release: gate.resolve,
        answer,
        execution,
      });
    } else {
      expect(await answer).toEqual(settle(step.key, step.body, step.outcome, execution));
    }
  }
  while (inFlight.length > 0) {
    const held = inFlight.shift();
    if (!held) break;
    held.release();
    expect(await held.answer).toEqual(settle(held.key, held.body, held.outcome, held.execution));
  }
  return { runs, expectedRuns, committed };
}
