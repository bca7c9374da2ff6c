import { type PaginateOptions, paginate } from '@holdfast/cursor-pagination';
import type { Db } from '@holdfast/db';

/**
 * The page statement `paginate()` sends for `options`, as text and values, run nowhere: what
 * the plan tests EXPLAIN, so they check exactly the SQL a list runs.
 */
export async function pageStatement(options: PaginateOptions): Promise<{ text: string; values: unknown[] }> {
  let statement: { text: string; values: unknown[] } | undefined;
  const recorder: Db = {
    async query<Row>(text: string, values?: readonly unknown[]): Promise<Row[]> {
      statement ??= { text, values: [...(values ?? [])] };
      return [];
    },
  };
  await paginate(recorder, options);
  if (!statement) throw new Error('paginate sent no statement');
  return statement;
}
