export { declareWebhooks, type OutboundWebhook, webhookHeadersSchema } from './openapi-webhooks';
