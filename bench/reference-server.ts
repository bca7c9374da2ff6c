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
    const read = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (!match?.[1]) return;
      // Once listening, the request log is only drained: kept and searched, it would grow the
      // bench's work with every line, slow its reading, and block the server on a full pipe.
      child.stdout?.off('data', read);
      child.stdout?.resume();
      resolve(match[1]);
    };
    child.stdout?.on('data', read);
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)));
  });
  return { child, url };
}

/** A server started through `npm start`, as an outside user (or probe) starts it. */
export interface NpmStartedServer {
  readonly url: string;
  /** The demo key the start-up banner printed (a fresh database with demo data), if any. */
  readonly demoKey: string | undefined;
  /** SIGTERM to npm and everything under it (npm, its shell, the server); resolves once all exited. */
  stop(): Promise<void>;
}

/**
 * Runs `npm start` at the repository's root with `env` over this process's environment (always
 * `PORT` 0) and resolves once the banner names the URL (and, on a fresh database, the demo key).
 * npm runs in its own process group so `stop` reaches the server under npm and its shell.
 *
 * @example
 * ```ts
 * const server = await startThroughNpm({ DATABASE_URL: url, NODE_ENV: 'development' });
 * await server.stop();
 * ```
 */
export async function startThroughNpm(env: Record<string, string>): Promise<NpmStartedServer> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const child = spawn('npm', ['start', '--silent'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started = await new Promise<{ url: string; demoKey: string | undefined }>((resolve, reject) => {
    let out = '';
    const read = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const url = /listening on (http:\/\/[^\s]+)/.exec(out)?.[1];
      // The banner is one write: the key, if any, is in it with the URL.
      if (!url || !/\n\s*$/.test(out)) return;
      // From here the request log is only drained (see startReferenceServer).
      child.stdout?.off('data', read);
      resolve({ url, demoKey: /save it now:\s+(\S+)/.exec(out)?.[1] });
    };
    child.stdout?.on('data', read);
    child.once('exit', (code) => reject(new Error(`npm start exited (${code}) before listening`)));
  });
  // Keep draining the request log, or the server blocks on a full pipe.
  child.stdout?.resume();
  return {
    ...started,
    async stop() {
      const group = child.pid;
      if (group === undefined) return;
      if (child.exitCode === null) process.kill(-group, 'SIGTERM');
      await exited;
      // npm exits at once on SIGTERM; the server under it finishes its graceful stop after.
      const alive = () => {
        try {
          process.kill(-group, 0);
          return true;
        } catch {
          return false;
        }
      };
      while (alive()) await new Promise((resolve) => setTimeout(resolve, 50));
    },
  };
}
