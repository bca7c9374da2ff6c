import { type Migration, sqlMigrations } from '@holdfast/db/migrate';

/**
 * The sender's migrations, in apply order, read from the package's `migrations/NNN_name.sql`
 * files (plain SQL, also shipped in the tarball for any other migration tool): the tables and
 * indexes (`001_schema`), endpoints' filters (`002_endpoint_filter`), ordered delivery
 * (`003_ordering`), the indexes of lists sorted by status (`004_status_sorts`), the functions
 * the hot statements call (`005_functions`), and the history tables partitioned by time with the
 * functions that keep their partitions (`007_partitions`, see `maintainDeliveryHistory`), those
 * functions' locks (`008_history_locks`), the queue of unfinished work that lease rounds read
 * (`009_queue`), the adaptive limit's increase out of the outcome statement (`010_pacing`), a
 * lease round that reads each row it needs once (`011_lease_reads`), wakes applied by
 * endpoint (`012_wakes`), turns another worker moved seen as come (`013_turns_come`), and the
 * queue triggers' plans kept on their indexes (`014_trigger_plans`), a repair of idle turns
 * that locks only the turns it may move (`015_settle_idle`), ordered lines read in the queue,
 * so the outbox write plans and locks one history partition (`016_lines_by_queue`), writes held
 * back while a partition is attached, so none fails on the partitions it saw before
 * (`017_attach_blocks_writers`), the dead deliveries indexed, so counting them reads them
 * alone (`018_dead_letters`), and the deliveries' indexes nothing reads since the queue dropped
 * (`019_unread_indexes`). Ids are `@holdfast/webhook-delivery/NNN_name`.
 * `schema` puts every table in that schema (created when missing); give the same `schema` to
 * every function of the package and to the worker.
 *
 * @example
 * ```ts
 * import { migrate } from '@holdfast/db/migrate';
 * await migrate(fromPg(pool), migrations({ schema: 'webhooks' }));
 * ```
 */
export function migrations(options: { schema?: string } = {}): Migration[] {
  return sqlMigrations(new URL('../migrations/', import.meta.url), '@holdfast/webhook-delivery', options);
}
