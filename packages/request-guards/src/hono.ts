export { type JsonBodyOptions, jsonBody, refuseFields, refuseNul } from './hono-json-body';
export { type RequestIdOptions, requestId } from './hono-request-id';
