// @ts-check
/**
 * The API client: the management API only (under the `holdfast-api-base` the server wrote into the
 * shell, `/v1` on the reference server, with `Authorization: Bearer <token>`), with the API key or
 * portal session token from this tab's sessionStorage.
 *
 * @typedef {import('./values.js').Json} Json
 * @typedef {{ data: Json[], pageInfo: { nextCursor: string | null, hasMore: boolean } }} Page
 * @typedef {{ field?: string, code?: string, detail?: string, pointer?: string }} FieldError
 */

import { pageSetting } from './dom.js';
import { obj, str } from './values.js';

export const KEY_STORAGE = 'holdfast.dashboard.apiKey';
const API_BASE = pageSetting('holdfast-api-base') || '/v1';
export const PAGE_SIZE = 20;

export class ApiError extends Error {
  /**
   * @param {{ title: string, detail?: string | undefined, status: number, code?: string | undefined,
   *   requestId?: string | undefined, errors?: FieldError[], retryAfter?: string | undefined }} info
   */
  constructor(info) {
    super(info.detail ?? info.title);
    this.name = 'ApiError';
    this.title = info.title;
    this.detail = info.detail;
    this.status = info.status;
    this.code = info.code;
    this.requestId = info.requestId;
    this.errors = info.errors ?? [];
    this.retryAfter = info.retryAfter;
  }
}

/** @type {(error: ApiError) => void} */
let onUnauthorized = () => {};

/**
 * What happens when the API refuses the stored key (the session signs out); set once at start.
 * @param {(error: ApiError) => void} handler
 */
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

export function apiKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

/**
 * What a portal session token says about itself (its mode, whether it is read-only), for the
 * page's chrome only: the server checks the signature and refuses what the session may not do.
 * @param {string | null} token
 * @returns {{ livemode: boolean, readOnly: boolean } | undefined}
 */
export function sessionClaims(token) {
  const payload = token?.startsWith('hfps_') ? token.slice(5).split('.')[0] : undefined;
  if (payload === undefined) return undefined;
  try {
    const json = JSON.parse(atob(payload.replaceAll('-', '+').replaceAll('_', '/')));
    return { livemode: json.l === true, readOnly: json.r === true };
  } catch {
    return undefined;
  }
}

/**
 * Whether this tab's caller is a read-only portal session: the views then leave out the
 * controls that write (the API would refuse them with 403 anyway).
 */
export function readOnly() {
  return sessionClaims(apiKey())?.readOnly === true;
}

/**
 * Calls the public API. Problem documents (RFC 9457) become an `ApiError` that keeps the request id.
 *
 * @param {string} path under the API base (`/webhook-endpoints`)
 * @param {{ method?: string, query?: Record<string, string | undefined>, body?: unknown, key?: string }} [options]
 * @returns {Promise<{ status: number, data: unknown, requestId: string | undefined }>}
 */
export async function api(path, options = {}) {
  const key = options.key ?? apiKey();
  if (key === null)
    throw new ApiError({ title: 'Signed out', detail: 'Sign in with an API key.', status: 401 });
  const url = new URL(API_BASE + path, window.location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== '') url.searchParams.set(name, value);
  }
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json, application/problem+json', Authorization: `Bearer ${key}` };
  /** @type {RequestInit} */
  const init = {
    method: options.method ?? 'GET',
    headers,
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
  };
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  /** @type {Response} */
  let res;
  try {
    res = await fetch(url, init);
  } catch {
    throw new ApiError({
      title: 'The server could not be reached',
      detail: 'Check that the Holdfast server is running and your connection works, then try again.',
      status: 0,
    });
  }
  const requestId = res.headers.get('Request-Id') ?? undefined;
  const text = res.status === 204 ? '' : await res.text();
  /** @type {unknown} */
  let body = null;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
  }
  if (!res.ok) {
    const problem = obj(body) ?? {};
    const errors = Array.isArray(problem.errors)
      ? problem.errors.flatMap((e) => {
          const entry = obj(e);
          return entry === undefined
            ? []
            : [
                /** @type {FieldError} */ ({
                  field: str(entry.field),
                  code: str(entry.code),
                  detail: str(entry.detail),
                  pointer: str(entry.pointer),
                }),
              ];
        })
      : [];
    const error = new ApiError({
      title: str(problem.title) ?? `Request failed (HTTP ${res.status})`,
      detail: str(problem.detail),
      status: res.status,
      code: str(problem.code),
      requestId: str(problem.requestId) ?? requestId,
      errors,
      retryAfter: res.headers.get('Retry-After') ?? undefined,
    });
    if (res.status === 401 && options.key === undefined) onUnauthorized(error);
    throw error;
  }
  return { status: res.status, data: body, requestId };
}

/**
 * @param {unknown} body
 * @returns {Page}
 */
export function asPage(body) {
  const envelope = obj(body);
  /** @type {Json[]} */
  const data = [];
  if (Array.isArray(envelope?.data)) {
    for (const row of envelope.data) {
      const item = obj(row);
      if (item !== undefined) data.push(item);
    }
  }
  const info = obj(envelope?.pageInfo);
  const nextCursor = str(info?.nextCursor) ?? null;
  return { data, pageInfo: { nextCursor, hasMore: info?.hasMore === true && nextCursor !== null } };
}
