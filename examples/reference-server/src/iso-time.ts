/**
 * `date.toISOString()`, about 2.5 times faster: the API's timestamps are formatted for every row
 * of every page, and V8's `toISOString` (a call into the runtime) was a tenth of a list request's
 * CPU time in bench/server. Years 0 to 9999 are computed here (days to a civil date as in
 * H. Hinnant's `civil_from_days`); anything else, and an invalid date, goes to `toISOString`.
 *
 * @example
 * ```ts
 * isoTime(new Date(0)); // '1970-01-01T00:00:00.000Z'
 * ```
 */
export function isoTime(date: Date): string {
  const time = date.getTime();
  // -62167219200000 is 0000-01-01T00:00:00.000Z, 253402300800000 is 10000-01-01.
  if (!(time >= -62_167_219_200_000 && time < 253_402_300_800_000)) return date.toISOString();
  const seconds = Math.floor(time / 1000);
  const ms = time - seconds * 1000;
  const days = Math.floor(seconds / 86_400);
  const ofDay = seconds - days * 86_400;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const ofEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (ofEra - Math.floor(ofEra / 1460) + Math.floor(ofEra / 36_524) - Math.floor(ofEra / 146_096)) / 365,
  );
  const dayOfYear = ofEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(ofDay / 3600);
  const minutes = Math.floor((ofDay - hours * 3600) / 60);
  return `${year < 1000 ? String(year).padStart(4, '0') : year}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(ofDay % 60)}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
