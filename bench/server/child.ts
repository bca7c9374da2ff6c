// What both servers of bench/server answer over IPC: their CPU time so far ('cpu'), and a CPU
// profile of just the measured rounds ('profile-start', then 'profile-stop' with the file to
// write), taken with the inspector so start-up, seeding and warm-up stay out of it.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

let session: Session | undefined;

/** Answers run.ts's messages; `stop` closes the server and exits. */
export function answerParent(stop: () => Promise<void>): void {
  process.on('message', (message: string | { profileStop: string }) => {
    if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
    else if (message === 'profile-start') void startProfile();
    else if (typeof message === 'object' && 'profileStop' in message) void stopProfile(message.profileStop);
    else if (message === 'stop') void stop().then(() => process.exit(0));
  });
}

async function startProfile(): Promise<void> {
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  process.send?.({ profiling: true });
}

async function stopProfile(file: string): Promise<void> {
  const { profile } = (await session?.post('Profiler.stop')) ?? {};
  if (profile) writeFileSync(file, JSON.stringify(profile));
  session?.disconnect();
  session = undefined;
  process.send?.({ profiled: file });
}
