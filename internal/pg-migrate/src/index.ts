export { type MigrateOptions, migrate } from './migrate';
export type { Migration } from './migration';
export type { Sql } from './sql';
