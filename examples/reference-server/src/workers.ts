import type postgres from 'postgres';
import { processInbox } from './inbox';

/** A background loop that can be stopped; `stop` waits for the round in flight. */
interface Loop {
  stop(): Promise<void>;
}

/**
 * Runs `tick` repeatedly: again at once while it reports work done, otherwise after `idleMs`.
 * Errors are logged and the loop carries on (a database restart must not end the worker).
 */
export function startLoop(
  name: string,
  tick: () => Promise<number>,
  idleMs: number,
  log: (message: string) => void,
): Loop {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  const done = (async () => {
    while (!stopped) {
      let handled = 0;
      try {
        handled = await tick();
      } catch (error) {
        log(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (stopped) break;
      if (handled > 0) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, idleMs);
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

export interface InboxProcessorOptions {
  readonly sql: postgres.Sql;
  /** How long to wait when the inbox is empty. @defaultValue 250 */
  readonly idleMs?: number;
  readonly log?: (message: string) => void;
}

/**
 * Starts the inbox processor: verified inbound events queued by `/hooks/{name}` are processed
 * in the background (SPEC section 6, verification step 4), never inline in the request.
 *
 * @example
 * ```ts
 * const inbox = startInboxProcessor({ sql });
 * await inbox.stop();
 * ```
 */
export function startInboxProcessor(options: InboxProcessorOptions): Loop {
  return startLoop(
    'inbox processor',
    () => processInbox(options.sql),
    options.idleMs ?? 250,
    options.log ?? ((message) => console.error(message)),
  );
}
