export { type PortalPagesHandler, type PortalPagesOptions, portalPages } from './pages';
export {
  createPortalSession,
  type PortalSession,
  type PortalSessionClaims,
  type PortalSessionOptions,
  portalSessionAuthorizer,
} from './session';
