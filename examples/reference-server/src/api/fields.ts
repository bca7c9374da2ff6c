import { z } from '@hono/zod-openapi';
import { isCurrency } from '../currency/index';

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

/** An ISO 4217 code, upper case, checked against the active list of @holdfast/currency-codes. */
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
