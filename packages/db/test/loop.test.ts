import { describe, expect, it } from 'vitest';
import { startLoop } from '../src/index';

describe('startLoop', () => {
  it('runs again at once while a round finds work, and waits when it finds none', async () => {
    const rounds: number[] = [];
    let idle: () => void = () => {};
    const idled = new Promise<void>((resolve) => {
      idle = resolve;
    });
    const work = [3, 2, 1, 0];
    const loop = startLoop(
      async () => {
        const found = work.shift() ?? 0;
        rounds.push(found);
        if (found === 0) idle();
        return found;
      },
      // Far longer than the test: a second round after the empty one would have to be a bug.
      { idleMs: 3_600_000, onError: () => {} },
    );
    await idled;
    await loop.stop();
    expect(rounds).toEqual([3, 2, 1, 0]);
  });

  it('reports a round that throws and carries on, one round at a time', async () => {
    const errors: unknown[] = [];
    let running = 0;
    let most = 0;
    let calls = 0;
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const loop = startLoop(
      async () => {
        running += 1;
        most = Math.max(most, running);
        calls += 1;
        await Promise.resolve();
        running -= 1;
        if (calls === 1) throw new Error('database restarting');
        if (calls === 3) finish();
        return calls < 3 ? 1 : 0;
      },
      { idleMs: 0, onError: (error) => errors.push(error) },
    );
    await finished;
    await loop.stop();
    expect(errors).toHaveLength(1);
    expect(most).toBe(1);
    expect(calls).toBeGreaterThanOrEqual(3);
  });

  it('stops an idle loop at once, waiting for no timer', async () => {
    let calls = 0;
    const loop = startLoop(
      async () => {
        calls += 1;
        return 0;
      },
      { idleMs: 3_600_000, onError: () => {} },
    );
    await Promise.resolve();
    await loop.stop();
    expect(calls).toBe(1);
  });

  it('asks an idleMs function after each idle round: a short wait after a busy round, a long one after', async () => {
    const asked: number[] = [];
    let calls = 0;
    let third: () => void = () => {};
    const reached = new Promise<void>((resolve) => {
      third = resolve;
    });
    const loop = startLoop(
      async () => {
        calls += 1;
        return 0;
      },
      {
        // The first two idle rounds say "busy, soon" (0 ms); then an hour, longer than the test.
        idleMs: () => {
          const wait = calls < 3 ? 0 : 3_600_000;
          asked.push(wait);
          if (wait > 0) third();
          return wait;
        },
        onError: () => {},
      },
    );
    await reached;
    await loop.stop();
    expect([calls, asked]).toEqual([3, [0, 0, 3_600_000]]);
  });
});
