export type { Authorize, PortalCaller } from './caller';
