import type { OpenAPIHono } from '@hono/zod-openapi';
import type { PortalCaller } from '../caller';

/** The Hono environment of the management routes: the caller `authorize` answered. */
export interface ManagementEnv {
  Variables: {
    portalCaller: PortalCaller;
    jsonBody: unknown;
  };
}

/** The app the route modules register on. */
export type ManagementApp = OpenAPIHono<ManagementEnv>;
