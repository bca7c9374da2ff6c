export { jsonBody, refuseFields, refuseNul } from './hono-json-body';
export { requestId } from './hono-request-id';
