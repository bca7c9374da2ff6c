// The reference server started as `npm start` starts it (src/main.ts through tsx, its own
// defaults), for the benches that measure it from outside (bench/latency, bench/soak).
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Spawns the server with `env` over this process's environment (always `PORT` 0: an ephemeral port)
 * and resolves with the child and the URL it printed once listening.
 *
 * @example
 * ```ts
 * const { child, url } = await startReferenceServer({ DATABASE_URL: databaseUrl.toString() });
 * ```
 */
export async function startReferenceServer(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const serverDir = fileURLToPath(new URL('../examples/reference-server/', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@holdfast/source', 'src/main.ts'], {
    cwd: serverDir,
    env: { ...process.env, ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)));
  });
  return { child, url };
}
