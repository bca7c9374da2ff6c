// Preloaded into the server by `LATENCY_TRACE=1 npx tsx bench/latency/run.ts` (through
// NODE_OPTIONS, so it rides `npm start` into the server's process). It writes one JSON line per
// event-loop stall and per garbage collection to LATENCY_TRACE_FILE, stamped with the wall clock
// (ms since the epoch, sub-millisecond), which the bench lines up with its slowest webhooks.
// Plain JavaScript: it is loaded before tsx.
import { appendFileSync } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const file = process.env.LATENCY_TRACE_FILE;
// NODE_OPTIONS reaches npm, its shell and tsx's own CLI too (which runs the server in a child
// process, passing src/main.ts on): trace only the process whose script is the server.
const isServer = process.argv[1]?.endsWith('src/main.ts') ?? false;
if (file && isServer) {
  const wall = () => performance.timeOrigin + performance.now();
  const lines = [];
  const flush = () => {
    if (lines.length > 0) appendFileSync(file, lines.splice(0).join(''));
  };
  // A timer due every 5 ms: how late it fires is how long the loop was held.
  let expected = wall() + 5;
  const tick = () => {
    const at = wall();
    const late = at - expected;
    if (late >= 5) lines.push(`${JSON.stringify({ kind: 'stall', at, ms: late })}\n`);
    expected = at + 5;
    setTimeout(tick, 5).unref();
  };
  setTimeout(tick, 5).unref();
  const kinds = { 1: 'minor', 4: 'major', 8: 'incremental', 16: 'weak callbacks' };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = kinds[entry.detail?.kind] ?? String(entry.detail?.kind);
      lines.push(
        `${JSON.stringify({ kind: 'gc', gc: kind, at: performance.timeOrigin + entry.startTime, ms: entry.duration })}\n`,
      );
    }
  }).observe({ entryTypes: ['gc'] });
  // A hook for temporary probes in the server's code while hunting a stall:
  // `globalThis.__latencyTrace?.('lease', { rows: 3 })`.
  globalThis.__latencyTrace = (stage, fields) =>
    lines.push(`${JSON.stringify({ kind: stage, at: wall(), ...fields })}\n`);
  setInterval(flush, 500).unref();
  process.on('exit', flush);
}

// LATENCY_PROFILE=<rate>: a CPU profile of the server while the bench offers that rate. The
// bench creates `<prefix>.start` and `<prefix>.stop` (files: npm stands between it and the
// server's process, so no signal or IPC reaches it); the profile goes to `<prefix>.cpuprofile`.
const profile = process.env.LATENCY_PROFILE_FILE;
if (profile && isServer) {
  const { Session } = await import('node:inspector/promises');
  const { existsSync, renameSync, writeFileSync } = await import('node:fs');
  let session;
  let done = false;
  const poll = setInterval(async () => {
    if (done) return;
    if (!session && existsSync(`${profile}.start`)) {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    } else if (session && existsSync(`${profile}.stop`)) {
      done = true;
      clearInterval(poll);
      const { profile: taken } = await session.post('Profiler.stop');
      // Whole or not at all: the bench reads it once the name appears.
      writeFileSync(`${profile}.part`, JSON.stringify(taken));
      renameSync(`${profile}.part`, `${profile}.cpuprofile`);
      session.disconnect();
    }
  }, 100);
  poll.unref();
}
