import { isProblemError, type ProblemError } from '@holdfast/problem-details';

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
/** A key no other test uses (the table is shared by the whole file). */
export function freshKey(): string {
  sequence += 1;
  return `key-${sequence}-${Math.random().toString(36).slice(2)}`;
}

/**
 * Starts `run(inside)`, whose handler calls `await inside()` once it has written: that holds its
 * transaction open (and the key claimed) until `release()`. Resolves once the handler is inside.
 */
export async function holding<T>(
  run: (inside: () => Promise<void>) => Promise<T>,
): Promise<{ readonly result: Promise<T>; release(): void }> {
  const gate = deferred();
  const started = deferred();
  const result = run(async () => {
    started.resolve();
    await gate.promise;
  });
  await started.promise;
  return { result, release: () => gate.resolve() };
}
