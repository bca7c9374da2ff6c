import { parseSourceRanges } from '@holdfast/webhook-verifier/receiver';
import { z } from 'zod';

/** One receiver of `/hooks/{name}`: the account its events belong to and the secrets that verify them. */
export interface ReceiverConfig {
  readonly account: string;
  /** Whether its events are live or test data (CONTRACT section 10). @defaultValue `'test'` */
  readonly mode: 'test' | 'live';
  /** Several during a secret rotation: a signature by any of them verifies. */
  readonly secrets: readonly string[];
  /**
   * CIDR ranges deliveries may come from (the sender's published source addresses); another
   * client address is 403 `webhook_source_forbidden` before the body is read. Absent: any address.
   */
  readonly sources?: readonly string[] | undefined;
}

/** A CIDR range the receiver toolkit can match: its own parser decides. */
const cidr = z.string().refine(
  (text) => {
    try {
      parseSourceRanges([text]);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'a CIDR range such as 203.0.113.0/24 or 2001:db8::/32' },
);

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const Receivers = z.record(
  z.string().regex(NAME, 'receiver names are letters, digits, "-" and "_", at most 64'),
  z.strictObject({
    account: z.string().regex(/^acct_[A-Za-z0-9_-]+$/, 'an account id such as acct_demo'),
    mode: z.enum(['test', 'live']).default('test'),
    secrets: z.array(z.string().regex(/^whsec_[A-Za-z0-9+/]+=*$/, 'a whsec_ secret')).min(1),
    sources: z.array(cidr).min(1).optional(),
  }),
);

/**
 * Parses `HOLDFAST_RECEIVER_SECRETS` (CONTRACT section 5): a JSON object
 * `{ "<name>": { "account": "acct_...", "mode"?: "test" | "live", "secrets": ["whsec_..."], "sources"?: ["203.0.113.0/24"] } }`. Absent or empty: no
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
