export { type KeyAccountsOptions, keyAccounts } from './accounts';
export {
  type ApiKeyAuthOptions,
  apiKeyAuthenticator,
  type FailureLimit,
  insufficientScope,
  type Principal,
} from './authenticate';
export { dbApiKeyStore } from './db-store';
export { generateKey, hashKey, type KeyMode, parseBearer } from './key';
export { hasScope, type Scoped, scopeFor } from './scope';
export { type ApiKeyRecord, type ApiKeyStore, createKey, memoryApiKeyStore, type NewApiKey } from './store';
export { isLive, tenantOf } from './tenant';
