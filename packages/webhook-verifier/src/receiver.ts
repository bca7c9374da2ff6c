export { type DedupStore, memoryDedupStore } from './dedup';
export { eventSequence, eventVersion } from './event-version';
export { type Acknowledgement, type HandOff, memoryQueue, type WebhookEvent } from './receive';
export { type ReceiverProblem, type WebhookHandlerOptions, webhookHandler } from './receiver-handler';
export { parseSourceRanges, type SourceRanges } from './source-ranges';
export { memoryVersionStore, type VersionStore } from './versions';
