import type { Management } from './options';
import type { WindowQuota } from './quota';

/** The limits whose values a host may document by the name of its own setting. */
export type DocumentedLimit = 'maxEndpoints' | 'testEvents' | 'recover' | 'recoverMax';

/** How the OpenAPI descriptions name what belongs to the host. */
export interface ManagementDocs {
  /**
   * The host's names of its settings of the limits (`HOLDFAST_MAX_ENDPOINTS`): documented as
   * "at most `NAME` (default 16)" rather than the configured value.
   */
  readonly settings?: Partial<Record<DocumentedLimit, string>>;
  /** The host's events list, named where deliveries follow the same visibility. */
  readonly eventsPath?: string;
}

/** The package's defaults, as the descriptions state them next to a setting's name. */
const DEFAULTS: Record<DocumentedLimit, string> = {
  maxEndpoints: '16',
  testEvents: '10 a minute',
  recover: '5 an hour',
  recoverMax: '1000',
};

function windowText(quota: WindowQuota): string {
  if (quota.windowMs === 60_000) return `${quota.limit} a minute`;
  if (quota.windowMs === 3_600_000) return `${quota.limit} an hour`;
  return `${quota.limit} per ${quota.windowMs / 1000} s`;
}

function limitValue(m: Management, limit: DocumentedLimit): string {
  switch (limit) {
    case 'maxEndpoints':
      return String(m.maxEndpoints);
    case 'recoverMax':
      return String(m.recoverMax);
    case 'testEvents':
      return windowText(m.testEvents);
    case 'recover':
      return windowText(m.recover);
  }
}

/** In running text: "`NAME` ... (default 16)" when the host names its setting, else the value. */
export function limitInline(m: Management, limit: DocumentedLimit): string {
  const name = m.docs.settings?.[limit];
  return name ? `\`${name}\`` : (limitValue(m, limit).split(' ')[0] ?? '');
}

/** " (default 16)" after {@link limitInline} when the host names its setting, else "". */
export function limitDefault(m: Management, limit: DocumentedLimit): string {
  return m.docs.settings?.[limit] ? ` (default ${DEFAULTS[limit]})` : '';
}

/** "(NAME, default 16)", or "(16)": a limit in parentheses. */
export function limitParens(m: Management, limit: DocumentedLimit): string {
  const name = m.docs.settings?.[limit];
  return name ? `(${name}, default ${DEFAULTS[limit]})` : `(${limitValue(m, limit)})`;
}

/** The window of a quota in running text when the host does not name its setting: " (10 a minute)". */
export function quotaWindow(m: Management, limit: 'testEvents' | 'recover'): string {
  return m.docs.settings?.[limit]
    ? ` (default ${DEFAULTS[limit]})`
    : ` (a window of ${m[limit].windowMs / 1000} s)`;
}

/**
 * "`order.*` `orders:read`, `payment.*` `payments:read`": the read scope of each family of event
 * types (the part before the first dot) when its types share one, else of each type.
 */
export function scopeList(m: Management, needs = false): string {
  const families = new Map<string, string[]>();
  for (const type of m.rules.types) {
    const family = type.split('.', 1)[0] ?? type;
    families.set(family, [...(families.get(family) ?? []), type]);
  }
  const scopes = m.scopesOf;
  const parts: string[] = [];
  for (const [family, types] of families) {
    const first = scopes(types[0] ?? '').join('` or `');
    if (types.length > 1 && types.every((type) => scopes(type).join('` or `') === first)) {
      parts.push(`\`${family}.*\` ${parts.length === 0 && needs ? 'needs ' : ''}\`${first}\``);
    } else {
      for (const type of types)
        parts.push(
          `\`${type}\` ${parts.length === 0 && needs ? 'needs ' : ''}\`${scopes(type).join('` or `')}\``,
        );
    }
  }
  return parts.join(', ');
}
