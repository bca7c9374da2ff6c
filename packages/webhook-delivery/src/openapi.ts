export {
  type DeclareWebhooksOptions,
  declareWebhooks,
  type OutboundWebhook,
  webhookHeadersSchema,
} from './openapi-webhooks';
