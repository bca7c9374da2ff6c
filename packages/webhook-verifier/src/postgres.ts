export { type InboxUrlOptions, type InboxUrlProcessOptions, inboxFromUrl, type UrlInbox } from './connect';
export { migrations } from './migrations';
export {
  type InboxEntry,
  type InboxProcessOptions,
  type InboxTarget,
  type PostgresInbox,
  type PostgresInboxOptions,
  postgresInbox,
} from './postgres-inbox';
export { type Client, postgresDedupStore, postgresVersionStore } from './postgres-stores';
export { type JsonValue, storableJson } from './storable-json';
