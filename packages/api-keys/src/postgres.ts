export { type Migration, migrations, postgresApiKeyStore } from './postgres-store';
