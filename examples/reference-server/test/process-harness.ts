import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './webhooks-harness';

// Child processes for the operations tests: the server's main as `npm start` runs it, the CLI,
// and a private redis-server (so stopping Redis never disturbs anyone else's).

export const serverRoot: string = fileURLToPath(new URL('..', import.meta.url));

/** A running child with everything it printed so far. */
export interface Child {
  readonly process: ChildProcess;
  readonly output: string[];
  /** The server's URL, when it printed one. */
  url: string | undefined;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

function wrap(child: ChildProcess): Child {
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  return {
    process: child,
    output,
    url: undefined,
    stop: (signal = 'SIGTERM') =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}

/** Waits until `child` printed something matching `pattern`; rejects if it exits first. */
export function waitFor(
  child: Child,
  pattern: RegExp,
  what: string,
  timeoutMs = 45_000,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(child.output.join(''));
      if (!match) return false;
      cleanup();
      resolve(match);
      return true;
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${what} did not happen:\n${child.output.join('')}`));
    }, timeoutMs);
    const onData = () => check();
    const onExit = (code: number | null) => {
      if (check()) return;
      cleanup();
      reject(new Error(`${what}: the process exited with ${code}:\n${child.output.join('')}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.process.stdout?.off('data', onData);
      child.process.stderr?.off('data', onData);
      child.process.off('exit', onExit);
    };
    child.process.stdout?.on('data', onData);
    child.process.stderr?.on('data', onData);
    child.process.once('exit', onExit);
    check();
  });
}

/** Runs the server's main (`src/main.ts`) with `env` over the test defaults, and waits for its URL. */
export async function startServerProcess(env: Record<string, string>, argv: string[] = []): Promise<Child> {
  const child = wrap(
    spawn(process.execPath, ['--import', 'tsx', '--conditions=@holdfast/source', 'src/main.ts', ...argv], {
      cwd: serverRoot,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const [, url] = await waitFor(child, /listening on (http:\/\/\S+)/, 'the server printing its URL', 150_000);
  child.url = url;
  return child;
}

/**
 * Runs `command` in its own process group (so stopping it stops what it started, as `npm start`
 * starts node) and waits for the server's URL.
 */
export async function startCommand(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string | undefined> },
): Promise<Child> {
  const spawned = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const child = wrap(spawned);
  const pid = spawned.pid;
  // The group leader (npm) can exit before the node process it started has finished shutting
  // down; stop() resolves once the whole group is gone, so a caller removing the server's data
  // directory never races the server still writing into it.
  const groupGone = async () => {
    if (pid === undefined) return;
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
      try {
        process.kill(-pid, 0);
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (spawned.exitCode === null && spawned.signalCode === null && pid !== undefined) {
      const exited = new Promise<void>((resolve) => spawned.once('exit', () => resolve()));
      process.kill(-pid, signal);
      await exited;
    }
    await groupGone();
  };
  const result = { ...child, stop };
  const [, url] = await waitFor(
    result,
    /listening on (http:\/\/\S+)/,
    `${command} ${args.join(' ')} printing its URL`,
    90_000,
  );
  result.url = url;
  return result;
}

/** Runs the CLI (`src/cli.ts`) to completion: exit code and output. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  script = 'src/cli.ts',
): Promise<{ code: number | null; output: string }> {
  const child = wrap(
    spawn(process.execPath, ['--import', 'tsx', '--conditions=@holdfast/source', script, ...args], {
      cwd: serverRoot,
      env: { ...process.env, NODE_ENV: 'test', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const code = await new Promise<number | null>((resolve) => child.process.once('exit', resolve));
  return { code, output: child.output.join('') };
}

/** A redis-server of this test's own on a free port, saving nothing. */
export async function startRedis(): Promise<Child & { url: string; port: number }> {
  const port = await freePort();
  const child = wrap(
    spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
  await waitFor(child, /Ready to accept connections/, 'redis-server starting', 15_000);
  return Object.assign(child, { url: `redis://127.0.0.1:${port}`, port });
}
