import { monitorEventLoopDelay } from 'node:perf_hooks';

// Preloaded (`--import`) into a server process by the hostile-body test and bench/hostile: the
// event-loop delay of that process, measured beside the requests it serves, read and reset over
// the IPC channel with the message 'loop-delay'.

const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();

/** What the process answers to 'loop-delay': milliseconds since the last reset. */
export interface LoopDelay {
  readonly maxMs: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  /** CPU time (user and system) the process used, all threads. */
  readonly cpuMs: number;
}

let cpuSince = process.cpuUsage();

process.on('message', (message) => {
  if (message !== 'loop-delay') return;
  const delay: LoopDelay = {
    maxMs: histogram.max / 1e6,
    p99Ms: histogram.percentile(99) / 1e6,
    meanMs: histogram.mean / 1e6,
    cpuMs: (({ user, system }) => (user + system) / 1000)(process.cpuUsage(cpuSince)),
  };
  cpuSince = process.cpuUsage();
  process.send?.({ loopDelay: delay });
  histogram.reset();
});
