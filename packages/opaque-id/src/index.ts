export { newRequestId, opaqueId } from './opaque-id';
