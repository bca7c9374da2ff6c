import { defineConfig, holdfastBuild } from '../../tsup.config.base';

// One entry per driver, so no declaration of ours imports a driver other than its own (each
// driver is an optional peer); the root holds the Db type and what every entry shares.
export default defineConfig(
  holdfastBuild({
    index: 'src/index.ts',
    postgres: 'src/postgres.ts',
    pg: 'src/pg.ts',
    drizzle: 'src/drizzle.ts',
    kysely: 'src/kysely.ts',
    prisma: 'src/prisma.ts',
    migrate: 'src/migrate.ts',
  }),
);
