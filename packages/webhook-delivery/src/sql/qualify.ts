/**
 * A table's name in `schema` (`"schema".table`), or the bare name when no schema is given (the
 * connection's `search_path` finds it).
 */
export function qualify(schema?: string): (table: string) => string {
  if (schema === undefined) return (table) => table;
  const quoted = `"${schema.replace(/"/g, '""')}"`;
  return (table) => `${quoted}.${table}`;
}
