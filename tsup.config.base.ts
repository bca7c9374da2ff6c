import { defineConfig, type Options } from 'tsup';

/**
 * The one build every package shares: ESM and CJS, declarations for both, no minification
 * (consumers minify), Node 18 syntax. A package passes only its entry points.
 */
export function holdfastBuild(entry: Record<string, string>, extra: Partial<Options> = {}): Options {
  return {
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: false,
    splitting: false,
    treeshake: true,
    target: 'node18',
    outDir: 'dist',
    ...extra,
  };
}

export { defineConfig };

/** The entries of a package with a framework-neutral core and its three doors. */
export const coreAndDoors = {
  index: 'src/index.ts',
  hono: 'src/hono.ts',
  express: 'src/express.ts',
  fastify: 'src/fastify.ts',
} as const;
