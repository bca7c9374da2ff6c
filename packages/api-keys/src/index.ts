export { type KeyAccountsOptions, keyAccounts } from './accounts';
export {
  type ApiKeyAuthOptions,
  apiKeyAuthenticator,
  type FailureLimit,
  insufficientScope,
  type Principal,
} from './authenticate';
export { type ApiKeyStoreOptions, dbApiKeyStore } from './db-store';
export { hashKey, type KeyMode, parseBearer } from './key';
export { migrations } from './migrations';
export { hasScope, type Scoped, scopeFor } from './scope';
export { type ApiKeyRecord, type ApiKeyStore, createKey, memoryApiKeyStore, type NewApiKey } from './store';
export { isLive, tenantOf } from './tenant';
