import { toRequest, writeResponse } from '@holdfast/node-bridge';
import type { RequestHandler } from 'express';
import type { WebhookManagementApi } from './api/handler';
import { under } from './doors';

export type { WebhookManagementApi } from './api/handler';
export type { Authorize, PortalCaller } from './caller';

/**
 * An Express 5 middleware serving the management API under its `basePath` (the path as the
 * client sent it, `req.originalUrl`): other paths go on to `next()`. A body `express.json()`
 * already parsed is re-serialised; without a parser the stream is read as it comes.
 *
 * @example
 * ```ts
 * app.use(webhookManagement(webhookManagementApi({ ...options, basePath: '/webhooks' })));
 * ```
 */
export function webhookManagement(api: WebhookManagementApi): RequestHandler {
  return (req, res, next) => {
    const pathname = (req.originalUrl ?? req.url).split('?', 1)[0] ?? '';
    if (!under(api.basePath, pathname)) {
      next();
      return;
    }
    api(toRequest(req, { res }))
      .then((response) => writeResponse(res, response))
      .catch(next);
  };
}
