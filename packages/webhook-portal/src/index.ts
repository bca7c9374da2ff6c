export type { Authorize, PortalCaller } from './caller';
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
