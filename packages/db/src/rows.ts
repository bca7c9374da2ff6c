/** The rows of a driver's answer: an array already, or a result object holding `rows`. */
export function rowsOf<Row>(result: unknown): Row[] {
  if (Array.isArray(result)) return result;
  if (typeof result === 'object' && result !== null && 'rows' in result && Array.isArray(result.rows)) {
    return result.rows;
  }
  throw new TypeError('the driver returned neither rows nor a result with rows');
}
