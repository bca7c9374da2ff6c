export { type InboxMaintenance, type InboxMaintenanceOptions, maintainInbox } from './inbox-partitions';
export { migrations } from './migrations';
export {
  type InboxEntry,
  type InboxProcessOptions,
  type PostgresInbox,
  type PostgresInboxOptions,
  postgresInbox,
} from './postgres-inbox';
export { postgresDedupStore, postgresVersionStore } from './postgres-stores';
