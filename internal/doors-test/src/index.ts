import {
  type DoorCase,
  type DoorName,
  listenFastify,
  listenFetch,
  listenHono,
  listenNode,
  type RunningDoor,
  runDoorSuite,
} from '@holdfast/node-bridge/testing';
import { toProblemResponse } from '@holdfast/problem-details';

export { type DoorCase, type DoorName, listenNode, type RunningDoor } from '@holdfast/node-bridge/testing';

type Awaitable<T> = T | Promise<T>;
type FetchHandler = (request: Request) => Response | Promise<Response>;

/** What each door's app is built from, fresh for its suite (a factory may be async). */
export interface DoorApps {
  /** A Hono app (anything with `fetch`). */
  readonly hono: () => Awaitable<{ fetch: FetchHandler }>;
  /** An Express app (any Node request listener). */
  readonly express: () => Awaitable<Parameters<typeof listenNode>[0]>;
  /** A Fastify instance, not yet listening. */
  readonly fastify: () => Awaitable<Parameters<typeof listenFastify>[0]>;
  /** A bare Fetch handler; what it throws is answered by `toProblemResponse`, as an adopter's would be. */
  readonly fetch: () => Awaitable<FetchHandler>;
}

function rendering(handler: FetchHandler): FetchHandler {
  return async (request) => {
    try {
      return await handler(request);
    } catch (error) {
      return toProblemResponse(error, request);
    }
  };
}

/** How to start each door: its app built fresh and listening on its own port. */
export function doorStarters(apps: DoorApps): Record<DoorName, () => Promise<RunningDoor>> {
  return {
    hono: async () => listenHono(await apps.hono()),
    express: async () => listenNode(await apps.express()),
    fastify: async () => listenFastify(await apps.fastify()),
    fetch: async () => listenFetch(rendering(await apps.fetch())),
  };
}

/**
 * Runs `cases` against the same behaviour through every door, each listening on its own port
 * over real HTTP; a door that answers differently fails its case.
 */
export function runDoors(title: string, cases: readonly DoorCase[], apps: DoorApps): void {
  runDoorSuite(title, cases, doorStarters(apps));
}
