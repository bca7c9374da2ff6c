export { migrations, postgresApiKeyStore } from './postgres-store';
