import { z } from '@hono/zod-openapi';
import { isCurrency } from '../currencies';

// Field schemas shared by the commerce resources (CONTRACT section 1): the single source for
// validation and the OpenAPI document.

/** RFC 3339 UTC with milliseconds, as every timestamp in a body. */
export const timestamp = z.iso.datetime().meta({ example: '2026-11-22T16:30:19.123Z' });

/** Integer minor units; bounded so it stays exact in JSON numbers and in bigint. */
export const minorUnits = (description: string) =>
  z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .meta({ description: `${description} Integer minor units (cents for EUR, yen for JPY).`, example: 4200 });

/** An ISO 4217 code, upper case, checked against the active list in src/currencies.ts. */
export const currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'an upper-case ISO 4217 code such as EUR')
  .refine(isCurrency, 'not an active ISO 4217 currency code')
  .meta({ description: 'ISO 4217 currency code, upper case.', example: 'EUR' });

/** Free-form key/value strings for the caller's own use (at most 50 keys). */
export const metadata = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((value) => Object.keys(value).length <= 50, 'at most 50 keys')
  .meta({ description: 'Up to 50 string values for your own use.', example: { reference: 'A-1042' } });

/** Whether the data is live (made with an `hf_live_` key) or test data (CONTRACT section 10). */
export const livemode = z
  .boolean()
  .meta({ description: 'true for live data (hf_live_ keys), false for test data (hf_test_ keys).' });

/** `{ 'application/json': { schema } }`, the content of a JSON body or response. */
export const json = <T>(schema: T) => ({ 'application/json': { schema } });

/** A `Location` response header. */
export const locationHeader = z.object({
  Location: z.string().meta({ description: 'The URL of the created resource.' }),
});

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);
// The last calendar day formatted: the rows of a page mostly share a few days.
let cachedDay = Number.NaN;
let cachedDate = '';

/** `YYYY-MM-DD` of a day number since 1970-01-01 (proleptic Gregorian; H. Hinnant's civil_from_days). */
function civil(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return `${year < 1000 ? `000${year}`.slice(-4) : year}-${pad2(month)}-${pad2(day)}`;
}

/**
 * ISO string of a `timestamptz` column value, exactly `Date.prototype.toISOString()`: a list
 * page formats two timestamps per row, and V8's own formatter costs about 0.6 µs each (it
 * consults the time zone machinery even for UTC). Years outside 0000-9999 use the built-in.
 */
export function iso(value: Date): string {
  const time = value.getTime();
  if (!(time >= -62_167_219_200_000 && time < 253_402_300_800_000)) return value.toISOString();
  const days = Math.floor(time / 86_400_000);
  if (days !== cachedDay) {
    cachedDate = civil(days);
    cachedDay = days;
  }
  const inDay = time - days * 86_400_000;
  const seconds = Math.floor(inDay / 1000);
  return `${cachedDate}T${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}.${pad3(inDay % 1000)}Z`;
}
