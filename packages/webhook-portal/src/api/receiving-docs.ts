import {
  escapeHtml,
  type JsonValue,
  type OpenApiDocument,
  type ReferenceSection,
} from '@holdfast/problem-details';

type JsonObject = { readonly [key: string]: JsonValue };

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const code = (text: string): string => `<code>${escapeHtml(text)}</code>`;

// Runs as it is in a Fetch handler (Hono, Workers, Deno, Bun) or on Node with a Request.
const SNIPPET = `import { createVerifier } from '@holdfast/webhook-verifier';

// v1 endpoints: the whsec_ secret shown when the endpoint was created or rotated.
// v1a endpoints: the endpoint's whpk_ publicKey. During a rotation, list both keys.
const verifier = createVerifier({ secrets: [process.env.HOLDFAST_WEBHOOK_KEY ?? ''] });

export async function receive(request: Request): Promise<Response> {
  // The exact bytes that were signed: never a parsed and re-serialised body.
  const body = new Uint8Array(await request.arrayBuffer());
  const result = await verifier.verifyAsync(request.headers, body); // v1a is async on WebCrypto
  if (!result.ok) return new Response(result.detail, { status: result.status }); // 400 or 401
  const event = result.json();
  if (!event.ok) return new Response(event.detail, { status: 400 });
  // result.id is the webhook-id: the same on every retry and replay. Record it, skip repeats,
  // and hand the event to a queue: answer within 10 s.
  await enqueueOnce(result.id, event.value);
  return new Response(null, { status: 204 });
}`;

/**
 * The "Receiving webhooks" section of a host's API reference (a `sections` entry of
 * `renderReference` from `@holdfast/problem-details`), for the people who write receivers: the
 * event types (from the document's `webhooks`), the headers, both signature schemes, a
 * verification snippet using `@holdfast/webhook-verifier`, the retry schedule, dead letters and
 * replay, filters and test events; recovery and the source addresses when the document has
 * their paths (`{base}/webhook-endpoints/{id}/recover`, `/webhook-source-addresses`). `base` is
 * where the host serves the management API (`/v1` by default).
 *
 * @example
 * ```ts
 * const html = renderReference(document, { sections: [receivingWebhooksSection(document)] });
 * ```
 */
export function receivingWebhooksSection(document: OpenApiDocument, base = '/v1'): ReferenceSection {
  const webhooks = isObject(document.webhooks) ? document.webhooks : {};
  const paths = isObject(document.paths) ? document.paths : {};
  const rows = Object.entries(webhooks)
    .map(([type, item]) => {
      const post = isObject(item) && isObject(item.post) ? item.post : {};
      const body =
        isObject(post.requestBody) && isObject(post.requestBody.content) ? post.requestBody.content : {};
      const media = isObject(body['application/json']) ? body['application/json'] : {};
      const ref = isObject(media.schema) && typeof media.schema.$ref === 'string' ? media.schema.$ref : '';
      const name = ref.split('/').pop() ?? '';
      const what = typeof post.description === 'string' ? post.description.split(' POSTed')[0] : '';
      return `<tr><td>${code(type)}</td><td>${escapeHtml(what ?? '')}</td><td>${name ? `<a href="#schema-${escapeHtml(name)}">${code(name)}</a>` : ''}</td></tr>`;
    })
    .join('');
  const recover = isObject(paths[`${base}/webhook-endpoints/{id}/recover`])
    ? `<p>Recovering from an outage on your side: ${code(`POST ${base}/webhook-endpoints/{id}/recover`)} with ${code('{ "since": "2026-11-24T00:00:00.000Z" }')} (and optionally ${code('until')}) re-queues every dead or failed delivery of that endpoint created in the range and answers 202 with ${code('{ "recovered": n }')} (deliveries being attempted are left to that attempt; at most a quota of deliveries per call, oldest first; and a quota of recoveries per endpoint and hour, then 429 ${code('rate_limited')} with ${code('Retry-After')}).</p>`
    : '';
  const sources = isObject(paths['/webhook-source-addresses'])
    ? `<h3>Source addresses (allowlisting)</h3>
<p>Deliveries leave from the addresses published at <a href="/webhook-source-addresses">${code('GET /webhook-source-addresses')}</a> (no key; cache it for up to five minutes): ${code('{ "addresses": ["203.0.113.7/32"], "configured": true, "updatedAt": "2026-11-27T10:00:00.000Z" }')}, CIDR ranges, IPv4 and IPv6. To accept webhooks only from them, allow those ranges in your firewall, load balancer or reverse proxy in front of the receiver (the best place: it refuses before your code runs), or give them to your receiver: ${code('@holdfast/webhook-verifier')}'s receiver toolkit takes ${code('allowedSources')} and answers 403 ${code('webhook_source_forbidden')} before reading the body. Behind a proxy, judge the address the proxy saw (its ${code('X-Forwarded-For')} entry), and trust that header only on connections from your own proxy. The list is kept stable: when it changes, ${code('updatedAt')} moves and every account gets a ${code('webhook_source_addresses_changed')} notification (${code(`GET ${base}/notifications`)}) naming the old and new lists; refresh your allowlist then, or poll the list daily. ${code('"configured": false')} means this server publishes no addresses: allowlisting is not possible, rely on the signature alone. The signature stays the proof of origin in every case: an allowlist is defence in depth.</p>`
    : '';
  const html = `<h2 id="receiving-webhooks">Receiving webhooks</h2>
<p>Register an endpoint with ${code(`POST ${base}/webhook-endpoints`)} (${code('url')}, ${code('eventTypes')}). Every event of a subscribed type is POSTed to it as JSON (the ${code('Event')} shape of ${code(`GET ${base}/events/{id}`)}), following <a href="https://www.standardwebhooks.com/">Standard Webhooks</a>. Machine-readable: the ${code('webhooks')} section of <a href="/openapi.json">/openapi.json</a>.</p>
<table><thead><tr><th>event type</th><th>when</th><th>payload</th></tr></thead><tbody>${rows}</tbody></table>
<h3>Headers</h3>
<table><thead><tr><th>header</th><th>meaning</th></tr></thead><tbody>
<tr><td>${code('webhook-id')}</td><td>The event id (${code('evt_…')}): the same on every retry and replay. Deduplicate on it.</td></tr>
<tr><td>${code('webhook-timestamp')}</td><td>Unix seconds when this attempt was signed; every attempt is signed afresh. Refuse values more than 5 minutes from your clock.</td></tr>
<tr><td>${code('webhook-signature')}</td><td>Space-separated entries ${code('v1,<base64>')} or ${code('v1a,<base64>')}, one per signing key. Accept the delivery when any entry verifies.</td></tr>
</tbody></table>
<h3>Signature schemes</h3>
<p>Both sign the same content: ${code('webhook-id + "." + webhook-timestamp + "." + body')}, over the exact bytes of the body.</p>
<ul>
<li><strong>${code('v1')}</strong> (the default, ${code('signatureScheme: "v1"')}): HMAC-SHA256 with the endpoint's secret (${code('whsec_')} + base64), shown once, in the creation and rotation responses. Anyone holding the secret can verify and also sign.</li>
<li><strong>${code('v1a')}</strong> (${code('signatureScheme: "v1a"')}): an ed25519 signature (RFC 8032) made with a key only the server holds; verify it with the endpoint's ${code('publicKey')} (${code('whpk_')} + base64 of 32 bytes), shown in every endpoint response. Holding it lets a receiver verify, never sign: use it when receivers are many or cannot keep a secret.</li>
</ul>
<p>Rotation (${code(`POST ${base}/webhook-endpoints/{id}/rotate-secret`)}): for 24 hours the old key signs too, so each delivery carries one entry per key and receivers holding either accept it. Switch your receiver to the new key within that day.</p>
<h3>Verifying</h3>
<p>With <a href="https://www.npmjs.com/package/@holdfast/webhook-verifier">${code('@holdfast/webhook-verifier')}</a> (Node, Deno, Bun, Workers, browsers; it takes ${code('whsec_')} secrets and ${code('whpk_')} public keys in one list):</p>
<pre>${escapeHtml(SNIPPET)}</pre>
<p>${code('standardwebhooks')} and ${code('svix')} verify ${code('v1')} deliveries too (pass the ${code('whsec_')} secret).</p>
<h3>Retries</h3>
<p>Any 2xx within 10 seconds acknowledges a delivery. A timeout, a connection error, 408, 429 or 5xx is retried after 1 minute, 5 minutes, 30 minutes, 2 hours, 6 hours and 24 hours (each ±10 % jitter; a longer ${code('Retry-After')} wins): 7 attempts in all. 410 Gone disables the endpoint. Any other status, redirects included (they are never followed), ends the delivery at once. An endpoint that fails every attempt for 5 days is disabled; the account is told at least 24 hours before (${code(`GET ${base}/notifications`)}).</p>
<h3>Dead letters and replay</h3>
<p>A delivery out of retries, or refused with a status that is not retried, is ${code('dead')}: list them with ${code(`GET ${base}/deliveries?status=dead`)} and read each attempt (status, error, latency, the first 1 KiB of your answer) with ${code(`GET ${base}/deliveries/{id}/attempts`)}. ${code(`POST ${base}/deliveries/{id}/replay`)} re-queues the same delivery (202): the same ${code('webhook-id')}, signed afresh with the current time. While an attempt of it is running the answer is 409 ${code('delivery_in_flight')} with ${code('Retry-After')}: a delivery is never sent twice at once.</p>
${recover}
<h3>Filters</h3>
<p>An endpoint's optional ${code('filter')} keeps the events it does not want from being sent at all: a JSON object matched against the event (the body above) when it is recorded, for instance ${code('{ "type": "order.created", "data.object.total": { "$gte": 10000 } }')}. A dotted path with a value is equality; ${code('$eq')}, ${code('$ne')}, ${code('$in')}, ${code('$nin')}, ${code('$gt')}, ${code('$gte')}, ${code('$lt')}, ${code('$lte')} and ${code('$exists')} compare one path; ${code('$and')}, ${code('$or')} and ${code('$not')} combine. A missing path equals nothing (not even ${code('null')}); order comparisons match only a number with a number or a string with a string. The full rules are in the ${code('EventFilter')} schema; an invalid filter is 400 ${code('validation_failed')} naming the place.</p>
${sources}
<h3>Test events</h3>
<p>${code(`POST ${base}/webhook-endpoints/{id}/test`)} with ${code('{ "eventType": "order.created" }')} sends that endpoint alone one event whose ${code('data.object')} is the example shown for its type in ${code('/openapi.json')}, marked ${code('"test": true')} at the top level, with ${code('sequence')} 0. It is signed, retried and logged like any other delivery (202 with the delivery; follow its attempts). Each endpoint may be sent a limited number a minute; the next is 429 ${code('rate_limited')} with ${code('Retry-After')}. Ignore events with ${code('"test": true')} in production handlers, or use them to check your endpoint end to end.</p>`;
  return { nav: '<li><a href="#receiving-webhooks"><strong>Receiving webhooks</strong></a></li>', html };
}
