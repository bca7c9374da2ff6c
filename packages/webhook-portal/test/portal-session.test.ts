import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalSession, portalSessionAuthorizer } from '../src/index';

const SECRET = 'portal-session-test-secret-0123456789abcdef';
const T0 = Date.UTC(2026, 10, 27, 9, 0, 0);

/** A request bearing the token, as the portal page sends it to the management API. */
const bearer = (token: string) =>
  new Request('https://example.com/api/webhooks/webhook-endpoints', {
    headers: { Authorization: `Bearer ${token}` },
  });

/** A real server recording the request lines it receives: where a token would reach a log. */
let server: Server;
const requestLines: string[] = [];
let origin: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    requestLines.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
    res.end('portal');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('portal sessions', () => {
  it('carries the account, mode, scopes and read-only to the caller until it expires', async () => {
    let now = T0;
    const session = await createPortalSession(
      {
        account: 'acct_1',
        mode: 'live',
        scopes: ['webhooks:read', 'orders:read'],
        expiresIn: 600,
        readOnly: true,
      },
      { secret: SECRET, portalUrl: 'https://example.com/portal', now: () => now },
    );
    expect(session.expiresAt.toISOString()).toBe('2026-11-27T09:10:00.000Z');
    const authorize = portalSessionAuthorizer({ secret: SECRET, now: () => now });
    const caller = await authorize(bearer(session.token));
    expect(caller?.account).toBe('acct_1');
    expect(caller?.livemode).toBe(true);
    expect(caller?.readOnly).toBe(true);
    expect([...(caller?.scopes ?? [])].sort()).toEqual(['orders:read', 'webhooks:read']);

    const writable = await createPortalSession(
      { account: 'acct_1', livemode: false, scopes: [], expiresIn: 600 },
      { secret: SECRET, portalUrl: 'https://example.com/portal', now: () => now },
    );
    const writer = await authorize(bearer(writable.token));
    expect(writer?.readOnly).toBe(false);
    expect(writer?.livemode).toBe(false);

    now = T0 + 599_000;
    expect(await authorize(bearer(session.token))).toBeDefined();
    now = T0 + 600_000;
    expect(await authorize(bearer(session.token))).toBeUndefined();
  });

  it('refuses a forged, altered or foreign token, and anything that is not one', async () => {
    const session = await createPortalSession(
      { account: 'acct_1', mode: 'test', scopes: ['webhooks:read'], expiresIn: 600, readOnly: true },
      { secret: SECRET, portalUrl: 'https://example.com/portal' },
    );
    const authorize = portalSessionAuthorizer({ secret: SECRET });
    expect(await authorize(bearer(session.token))).toBeDefined();

    const [head = '', signature = ''] = session.token.split('.');
    const payload = JSON.parse(Buffer.from(head.slice('hfps_'.length), 'base64url').toString('utf8'));
    // The same signature over a payload that widens the session: another account, writes allowed.
    for (const change of [{ a: 'acct_2' }, { r: false }, { e: payload.e + 3600 }, { s: ['*'] }]) {
      const forged = `hfps_${Buffer.from(JSON.stringify({ ...payload, ...change })).toString('base64url')}.${signature}`;
      expect(await authorize(bearer(forged)), JSON.stringify(change)).toBeUndefined();
    }
    const otherSecret = await createPortalSession(
      { account: 'acct_1', mode: 'test', scopes: [], expiresIn: 600 },
      { secret: 'another-secret-of-the-same-length-0123456789', portalUrl: 'https://example.com/portal' },
    );
    expect(await authorize(bearer(otherSecret.token))).toBeUndefined();
    const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    for (const token of [
      `${head}.${flipped}`,
      head,
      `${head}.`,
      'hfps_.',
      'hf_test_abc',
      `${session.token}x`,
    ]) {
      expect(await authorize(bearer(token)), token).toBeUndefined();
    }
    expect(await authorize(new Request('https://example.com/'))).toBeUndefined();
    expect(await authorize(bearer(`hfps_${'a'.repeat(10_000)}.x`))).toBeUndefined();
  });

  it('puts the token only in the fragment, which no request carries to the server', async () => {
    const session = await createPortalSession(
      { account: 'acct_1', mode: 'test', scopes: ['webhooks:read'], expiresIn: 60 },
      { secret: SECRET, portalUrl: `${origin}/portal?tab=1` },
    );
    const url = new URL(session.url);
    expect(url.hash).toBe(`#session=${session.token}`);
    expect(url.pathname).toBe('/portal');
    expect(url.search).toBe('?tab=1');
    expect(url.pathname + url.search).not.toContain(session.token.slice(5, 20));

    const res = await fetch(session.url);
    expect(await res.text()).toBe('portal');
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatch(/^GET \/portal\?tab=1 /);
    expect(requestLines[0]).not.toContain(session.token.slice(5, 20));
  });

  it('refuses a weak secret, a session longer than a day and a missing mode', async () => {
    const options = { secret: SECRET, portalUrl: 'https://example.com/portal' };
    const claims = { account: 'acct_1', mode: 'test' as const, scopes: [], expiresIn: 60 };
    await expect(createPortalSession(claims, { ...options, secret: 'short' })).rejects.toThrow(TypeError);
    expect(() => portalSessionAuthorizer({ secret: 'short' })).toThrow(TypeError);
    await expect(createPortalSession({ ...claims, expiresIn: 86_401 }, options)).rejects.toThrow(RangeError);
    await expect(createPortalSession({ ...claims, expiresIn: 0 }, options)).rejects.toThrow(RangeError);
    await expect(createPortalSession({ ...claims, mode: undefined }, options)).rejects.toThrow(TypeError);
    await expect(createPortalSession({ ...claims, livemode: true }, options)).rejects.toThrow(/disagree/);
    const a = await createPortalSession(claims, options);
    const b = await createPortalSession(claims, options);
    expect(a.token).not.toBe(b.token);
  });
});
