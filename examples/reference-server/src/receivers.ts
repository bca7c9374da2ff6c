import { z } from 'zod';

/** One receiver of `/hooks/{name}`: the account its events belong to and the secrets that verify them. */
export interface ReceiverConfig {
  readonly account: string;
  /** Whether its events are live or test data (CONTRACT section 10). @defaultValue `'test'` */
  readonly mode: 'test' | 'live';
  /** Several during a secret rotation: a signature by any of them verifies. */
  readonly secrets: readonly string[];
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const Receivers = z.record(
  z.string().regex(NAME, 'receiver names are letters, digits, "-" and "_", at most 64'),
  z.strictObject({
    account: z.string().regex(/^acct_[A-Za-z0-9_-]+$/, 'an account id such as acct_demo'),
    mode: z.enum(['test', 'live']).default('test'),
    secrets: z.array(z.string().regex(/^whsec_[A-Za-z0-9+/]+=*$/, 'a whsec_ secret')).min(1),
  }),
);

/**
 * Parses `HOLDFAST_RECEIVER_SECRETS` (CONTRACT section 5): a JSON object
 * `{ "<name>": { "account": "acct_...", "mode"?: "test" | "live", "secrets": ["whsec_..."] } }`. Absent or empty: no
 * receivers. Anything malformed throws at start, naming the variable but never a secret.
 *
 * @example
 * ```ts
 * const receivers = parseReceiverSecrets(process.env.HOLDFAST_RECEIVER_SECRETS);
 * receivers.get('billing')?.account; // 'acct_demo'
 * ```
 */
export function parseReceiverSecrets(raw: string | undefined): ReadonlyMap<string, ReceiverConfig> {
  if (raw === undefined || raw.trim() === '') return new Map();
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error('HOLDFAST_RECEIVER_SECRETS is not valid JSON');
  }
  const parsed = Receivers.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new Error(`HOLDFAST_RECEIVER_SECRETS is malformed (${where})`);
  }
  return new Map(Object.entries(parsed.data));
}
