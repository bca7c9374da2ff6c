import { isCurrency } from '@holdfast/request-guards';
import { z } from '@hono/zod-openapi';

// Field schemas shared by the commerce resources (CONTRACT section 1): the single source for
// validation and the OpenAPI document. Timestamps, livemode and path ids are the same as the
// webhook resources', so they come from @holdfast/webhook-portal.

export { idParam, json, livemode, timestamp } from '@holdfast/webhook-portal';

/** Integer minor units; bounded so it stays exact in JSON numbers and in bigint. */
export const minorUnits = (description: string) =>
  z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .meta({ description: `${description} Integer minor units (cents for EUR, yen for JPY).`, example: 4200 });

/** An ISO 4217 code, upper case, checked against the active list of @holdfast/request-guards. */
export const currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'an upper-case ISO 4217 code such as EUR')
  .refine(isCurrency, 'not an active ISO 4217 currency code')
  .meta({ description: 'ISO 4217 currency code, upper case.', example: 'EUR' });

/** The most keys `metadata` holds. */
export const METADATA_MAX_KEYS = 50;

/**
 * Free-form key/value strings for the caller's own use (at most 50 keys). The count is checked
 * first, stopping at the 51st key, so 100,000 keys are refused without a look at each one
 * (CONTRACT section 11); only then are the keys and values validated.
 */
export const metadata = z.preprocess(
  (value, context) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    let count = 0;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      count += 1;
      if (count > METADATA_MAX_KEYS) {
        context.addIssue({ code: 'custom', message: `at most ${METADATA_MAX_KEYS} keys`, input: value });
        return z.NEVER;
      }
    }
    return value;
  },
  z
    .record(z.string().min(1).max(40), z.string().max(500))
    .meta({ description: 'Up to 50 string values for your own use.', example: { reference: 'A-1042' } }),
);

/** A `Location` response header. */
export const locationHeader = z.object({
  Location: z.string().meta({ description: 'The URL of the created resource.' }),
});
