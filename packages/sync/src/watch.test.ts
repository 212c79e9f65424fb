import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runWatchLoop, watchPause } from './watch.js';

describe('runWatchLoop', () => {
  it('runs again and again, one run at a time, until the signal stops it during a pause', async () => {
    const controller = new AbortController();
    let active = 0;
    let most = 0;
    const starts: number[] = [];
    const result = await runWatchLoop({
      intervalMs: 5,
      jitterRatio: 0.5,
      signal: controller.signal,
      runOnce: async ({ run }) => {
        starts.push(run);
        active++;
        most = Math.max(most, active);
        await sleep(3);
        active--;
        if (run === 4) setTimeout(() => controller.abort(), 1);
      },
    });
    expect(result).toEqual({ runs: 4, failures: 0 });
    expect(starts).toEqual([1, 2, 3, 4]);
    expect(most).toBe(1);
  });

  it('keeps going after a failed run and reports it', async () => {
    const controller = new AbortController();
    const reported: [string, number][] = [];
    const result = await runWatchLoop({
      intervalMs: 1,
      signal: controller.signal,
      runOnce: async ({ run }) => {
        if (run === 3) controller.abort();
        if (run !== 3) throw new Error(`failure ${run}`);
      },
      onError: (error, run) => {
        reported.push([(error as Error).message, run]);
      },
    });
    expect(reported).toEqual([
      ['failure 1', 1],
      ['failure 2', 2],
    ]);
    expect(result).toEqual({ runs: 3, failures: 2 });
  });

  it('a stop during a run waits for the run to end, starts no other, and an aborted run is no failure', async () => {
    const controller = new AbortController();
    let finished = 0;
    const errors: unknown[] = [];
    const loop = runWatchLoop({
      intervalMs: 1,
      signal: controller.signal,
      onError: (error) => {
        errors.push(error);
      },
      runOnce: async ({ run, signal }) => {
        if (run === 1) {
          finished++;
          return;
        }
        // A run that honours the signal: it ends with an AbortError.
        await sleep(10_000, undefined, { signal });
      },
    });
    await sleep(20);
    controller.abort();
    expect(await loop).toEqual({ runs: 2, failures: 0 });
    expect(finished).toBe(1);
    expect(errors).toEqual([]);
  });

  it('an already aborted signal runs nothing', async () => {
    let runs = 0;
    const result = await runWatchLoop({
      intervalMs: 1,
      signal: AbortSignal.abort(),
      runOnce: async () => void runs++,
    });
    expect(result).toEqual({ runs: 0, failures: 0 });
    expect(runs).toBe(0);
  });

  it('an onError that throws stops the loop with its error', async () => {
    await expect(
      runWatchLoop({
        intervalMs: 1,
        runOnce: async () => {
          throw new Error('run failed');
        },
        onError: () => {
          throw new Error('give up');
        },
      }),
    ).rejects.toThrow('give up');
  });

  it('refuses a negative interval or a jitter ratio outside 0..1', async () => {
    const runOnce = async () => {};
    await expect(runWatchLoop({ intervalMs: -1, runOnce })).rejects.toThrow(RangeError);
    await expect(runWatchLoop({ intervalMs: 10, jitterRatio: 2, runOnce })).rejects.toThrow(RangeError);
  });
});

describe('watchPause', () => {
  it('varies the interval by up to the jitter ratio either way', () => {
    expect(watchPause(1000, 0.2, () => 0)).toBe(800);
    expect(watchPause(1000, 0.2, () => 0.5)).toBe(1000);
    expect(watchPause(1000, 0.2, () => 0.999999)).toBe(1200);
    expect(watchPause(1000, 0, () => 0)).toBe(1000);
    expect(watchPause(1000, 1, () => 0)).toBe(0);
  });
});
