export type { ManagementResource } from './api/app';
export type { ManagementDocs } from './api/docs';
export { type EventTypeRules, type EventTypeScopes, eventTypeRules } from './api/event-types';
export {
  type ManagementOpenApi,
  type WebhookManagementApi,
  webhookManagementApi,
} from './api/handler';
export type { ManagementLimits, WebhookManagementOptions } from './api/options';
export { managementDefinitions } from './api/problems';
export type { WindowQuota } from './api/quota';
export { receivingWebhooksSection } from './api/receiving-docs';
export {
  AttemptSchema,
  DELIVERY_STATUSES,
  deliverySort,
  type EventTypeSchemas,
  endpointSort,
  idParam,
  json,
  livemode,
  timestamp,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
  webhookSchemas,
} from './api/schemas';
export {
  describeSourceAddresses,
  publishSourceAddresses,
  readSourceAddresses,
  SOURCE_ADDRESSES_CHANGED,
  type SourceAddresses,
  SourceAddressesSchema,
  type SourceAddressStore,
} from './api/source-addresses';
export type { Authorize, PortalCaller } from './caller';
export { migrations } from './migrations';
export {
  createPortalSession,
  type PortalPagesHandler,
  type PortalPagesOptions,
  type PortalSession,
  type PortalSessionClaims,
  type PortalSessionOptions,
  portalPages,
  portalSessionAuthorizer,
} from './portal/index';
