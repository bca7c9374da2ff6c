import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';

// CONTRACT section 11: a configuration that is unsafe is refused at start, not warned about.

const run = promisify(execFile);
const serverRoot = fileURLToPath(new URL('..', import.meta.url));
const unsafe = { NODE_ENV: 'production', HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1' };

it('refuses NODE_ENV=production with HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1, and allows either alone', () => {
  for (const flag of ['1', 'true', 'yes']) {
    expect(() => loadConfig({ ...unsafe, HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: flag })).toThrow(ConfigError);
  }
  expect(() => loadConfig(unsafe)).toThrow(
    /HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1 .* cannot be set with NODE_ENV=production/,
  );
  expect(loadConfig({ NODE_ENV: 'production' }).allowPrivateDestinations).toBe(false);
  expect(loadConfig({ NODE_ENV: 'production', HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '0' }).production).toBe(
    true,
  );
  expect(loadConfig({ HOLDFAST_ALLOW_PRIVATE_DESTINATIONS: '1' }).allowPrivateDestinations).toBe(true);
});

it('the server process exits 1 with the reason, before listening', async () => {
  const started = run(process.execPath, ['--import', 'tsx', '--conditions=@holdfast/source', 'src/main.ts'], {
    cwd: serverRoot,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', HOLDFAST_DATA_DIR: 'memory://', ...unsafe },
    timeout: 60_000,
  });
  const failure = await started.then(
    () => undefined,
    (error: unknown) => error as { code?: number; stdout?: string; stderr?: string },
  );
  expect(failure?.code).toBe(1);
  expect(failure?.stderr).toMatch(
    /Holdfast could not start: HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1 .* NODE_ENV=production/,
  );
  expect(failure?.stdout).not.toMatch(/listening/);
}, 90_000);

it('reads HOLDFAST_MAX_ENDPOINTS: 16 by default, a positive integer otherwise', () => {
  expect(loadConfig({}).maxEndpoints).toBe(16);
  expect(loadConfig({ HOLDFAST_MAX_ENDPOINTS: '3' }).maxEndpoints).toBe(3);
  for (const bad of ['0', '-1', '2.5', 'many']) {
    expect(() => loadConfig({ HOLDFAST_MAX_ENDPOINTS: bad })).toThrow(
      /HOLDFAST_MAX_ENDPOINTS must be a positive integer/,
    );
  }
});
