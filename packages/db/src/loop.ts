/** A background loop that can be stopped; `stop` waits for the round in flight. */
export interface Loop {
  stop(): Promise<void>;
}

/** Options of {@link startLoop}. */
export interface LoopOptions {
  /** How long to wait after a round that found no work: a number, or a function asked after each such round. */
  readonly idleMs: number | (() => number);
  /** Told of each round that threw; the loop carries on. */
  readonly onError: (error: unknown) => void;
}

/**
 * Runs `tick` repeatedly, the loop of a queue worker: again at once while it reports work done
 * (a count above 0), otherwise after `idleMs`. One round at a time: the next starts only once
 * the last has ended, so rounds never pile up behind a slow one. A round that throws goes to
 * `onError` and the loop carries on (a database restart must not end the worker). `stop()`
 * wakes an idle loop and resolves once the round in flight has ended.
 *
 * @example
 * ```ts
 * const loop = startLoop(() => processBatch(db), { idleMs: 250, onError: console.error });
 * await loop.stop();
 * ```
 */
export function startLoop(tick: () => Promise<number>, options: LoopOptions): Loop {
  const { idleMs, onError } = options;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  const done = (async () => {
    while (!stopped) {
      let handled = 0;
      try {
        handled = await tick();
      } catch (error) {
        onError(error);
      }
      if (stopped) break;
      if (handled > 0) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, typeof idleMs === 'number' ? idleMs : idleMs());
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await done;
    },
  };
}
