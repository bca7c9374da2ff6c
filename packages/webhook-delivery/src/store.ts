// The store's pieces, one concern per file; re-exported here for code that imports './store'.
export * from './endpoints';
export * from './outbox';
export * from './rows';
