import type { App } from '../context';

// The demo's built-in receiver: routes of the server itself, mounted outside production, its
// path the one loopback destination allowed there (`privateUrlPrefixes`), so `npm start` shows
// deliveries that succeed, are retried and die without anything else running. Not part of the
// API (absent from /openapi.json): it answers deliveries, nothing more.

/** How each receiver path answers. */
export const DEMO_RECEIVER_BEHAVIOURS = {
  /** Every delivery succeeds. */
  ok: 'answers 200',
  /** The first attempt of each message fails with a 503; the retry succeeds. */
  flaky: 'fails the first attempt of each message with 503, then answers 200',
  /** Every delivery is refused with a 422, which ends it at once (dead). */
  rejects: 'refuses every message with 422, so its deliveries die at once',
} as const;

export type DemoBehaviour = keyof typeof DEMO_RECEIVER_BEHAVIOURS;

/** The path every demo receiver is under. */
export const DEMO_RECEIVER_PREFIX = '/demo/receiver/';

/** The path of the receiver answering with `behaviour`. */
export const demoReceiverPath = (behaviour: DemoBehaviour): string => `${DEMO_RECEIVER_PREFIX}${behaviour}`;

/** Mounts the receiver on `app`. `seen` remembers which messages the flaky one already failed once. */
export function demoReceiverRoutes(app: App): void {
  const seen = new Set<string>();
  app.post('/demo/receiver/:behaviour', async (c) => {
    await c.req.arrayBuffer();
    const behaviour = c.req.param('behaviour');
    const id = c.req.header('webhook-id') ?? '';
    if (behaviour === 'ok') return c.json({ received: true, id });
    if (behaviour === 'flaky') {
      if (!seen.has(id)) {
        // Bounded: a long-running demo must not grow without end.
        if (seen.size >= 10_000) seen.clear();
        seen.add(id);
        return c.text('demo receiver: the first attempt fails on purpose', 503);
      }
      return c.json({ received: true, id, retried: true });
    }
    if (behaviour === 'rejects') return c.text('demo receiver: this message is refused on purpose', 422);
    return c.text('no demo receiver of this name', 404);
  });
}
