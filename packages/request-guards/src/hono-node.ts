export { createHonoServer, type HonoServerOptions, type HttpLimits } from './hono-server';
