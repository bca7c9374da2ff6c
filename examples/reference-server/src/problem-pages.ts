import { problemPages } from '@holdfast/problem-details/hono';
import { httpFramingProblems } from '@holdfast/request-guards';
import { page } from './html';
import { contractDefinitions, PROBLEM_TYPE_BASE } from './problems';

/** What each code means and what a client should do, for `/problems/{code}`. */
const ADVICE: Record<
  keyof typeof contractDefinitions | keyof typeof httpFramingProblems.definitions,
  string
> = {
  invalid_json: 'The body is not UTF-8 JSON. Fix the client serialiser; do not retry unchanged.',
  validation_failed:
    'A field is missing, of the wrong type or out of range. `errors[]` names each field and pointer.',
  unknown_field:
    'The request has a body field or query parameter this endpoint does not define. Unknown fields are rejected, never ignored.',
  invalid_sort:
    'The `sort` parameter names a key outside the endpoint’s allowlist, repeats a key, or is malformed. The detail names the key.',
  too_many_sort_keys: 'At most 3 sort keys are honoured per request.',
  invalid_cursor:
    'The cursor is malformed, was altered, or was issued for another sort, filter or account. Start again from the first page.',
  idempotency_key_required:
    'This endpoint moves money: send an `Idempotency-Key` header (up to 255 characters).',
  webhook_timestamp_out_of_window:
    'The webhook’s timestamp is more than 300 seconds from the receiver’s clock.',
  unauthenticated: 'Send a valid API key as `Authorization: Bearer <key>`.',
  webhook_signature_invalid: 'No `v1` signature matched any configured secret over the raw body.',
  webhook_source_forbidden:
    "The request came from a client address outside the receiver's allowed source ranges (`sources` in `HOLDFAST_RECEIVER_SECRETS`); it was refused before its body was read. Send from an address in those ranges (a Holdfast sender publishes its own at `GET /webhook-source-addresses`), or add the sender's range.",
  forbidden: 'The API key is valid but lacks the scope this action needs.',
  not_found: 'Nothing is here, or it belongs to another account.',
  method_not_allowed: 'The path exists but not with this method. `Allow` lists the methods.',
  invalid_state_transition:
    'The resource’s status does not allow this move (for example, cancelling a shipped order, or paying a cancelled one).',
  version_conflict: 'The `If-Match` ETag no longer matches: fetch the resource again and reapply the change.',
  idempotency_key_in_use: 'A request with this key is still running. Retry after `Retry-After` seconds.',
  payload_too_large: 'The body is over 1 MiB.',
  unsupported_media_type:
    'Bodies must be `application/json`, sent without a content coding: a `Content-Encoding` other than `identity` is refused (the answer carries `Accept-Encoding: identity`).',
  idempotency_key_reused:
    'This key was used with a different request (method, path or body). Use a new key for a new request.',
  unprocessable:
    'The request is well-formed but refers to something that cannot be used (for example, an unknown payment method).',
  refund_exceeds_amount: 'The refund is larger than what is left unrefunded on the order.',
  payment_exceeds_total:
    'The payment’s amount is more than what is left to pay on its order: the order’s total less its payments that succeeded or are still processing. Pay at most the rest.',
  endpoint_limit_reached:
    'The account has as many webhook endpoints in this mode (test or live) as it may: 16 by default, `HOLDFAST_MAX_ENDPOINTS` on the server. Delete an endpoint you no longer use, or subscribe an existing one to more event types.',
  destination_url_forbidden:
    'Webhook destinations must be public https URLs; private, loopback and link-local addresses are refused. For local development and tests (not in production mode), start the server with `HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1` to allow them, e.g. `HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1 npm start`.',
  rate_limited:
    'Too many requests for this API key, or too many test events or recoveries for this webhook endpoint in their window. Wait `Retry-After` seconds; `RateLimit` shows the key’s quota.',
  delivery_in_flight:
    'An attempt of this delivery is running, so it is not replayed now: a delivery is never sent twice at once. Replay it after `Retry-After` seconds, once that attempt has ended (follow it with `GET /v1/deliveries/{id}`).',
  internal_error: 'A fault on our side. Retry with backoff and quote the request id if it persists.',
  service_unavailable: 'Temporarily unavailable. Retry after `Retry-After` seconds.',
  malformed_request:
    'The bytes received are not a well-formed HTTP/1.1 request, so no route saw it. Fix the client or proxy; do not retry unchanged.',
  request_timeout: 'The request did not arrive completely in time. Retry on a new connection.',
  expectation_failed:
    'The request’s `Expect` header asks for something other than `100-continue`, the only expectation this server meets. Send the request without it.',
  not_implemented:
    'The method (such as `CONNECT` or one HTTP does not define) or a transfer coding other than `chunked` is not implemented here. Use the methods `Allow` and the reference list, and send bodies with `Content-Length` or plain `chunked`.',
  header_fields_too_large:
    'The request line and headers exceed the server’s limit (16 KiB by default): shorten the URL or send fewer or smaller headers.',
};

/** `/problems` and `/problems/{code}`: the documentation every problem `type` URI names. */
export function contractProblemPages() {
  return problemPages({
    definitions: { ...contractDefinitions, ...httpFramingProblems.definitions },
    advice: ADVICE,
    typeBase: PROBLEM_TYPE_BASE,
    layout: page,
  });
}
