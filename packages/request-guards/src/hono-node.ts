export { createHonoServer, type HttpLimits } from './hono-server';
