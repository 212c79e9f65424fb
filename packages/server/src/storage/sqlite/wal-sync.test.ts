import { describe, expect, it } from 'vitest';
import { groupSync } from './wal-sync.js';

/** A sync to be ended by hand; `started` counts the syncs begun. */
function manualSyncs() {
  const ends: { resolve: () => void; reject: (e: Error) => void }[] = [];
  return {
    ends,
    syncOnce: () => new Promise<void>((resolve, reject) => ends.push({ resolve, reject })),
  };
}

const settled = async <T>(promise: Promise<T>) => {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
};

describe('group sync of the WAL', () => {
  it('a call waits for a sync begun after it; calls made during a sync share the next one', async () => {
    const { ends, syncOnce } = manualSyncs();
    const sync = groupSync(syncOnce);
    const first = sync();
    expect(ends).toHaveLength(1);
    // Made while the first sync runs: their writes may have missed it.
    const second = sync();
    const third = sync();
    expect(ends).toHaveLength(1);
    ends[0]!.resolve();
    await first;
    expect(await settled(second)).toBe(false);
    await Promise.resolve();
    await Promise.resolve();
    expect(ends).toHaveLength(2);
    ends[1]!.resolve();
    await Promise.all([second, third]);
    // Nothing running: the next call starts a sync of its own at once.
    const fourth = sync();
    expect(ends).toHaveLength(3);
    ends[2]!.resolve();
    await fourth;
  });

  it('a failed sync fails the calls it covered, and the next calls get a sync of their own', async () => {
    const { ends, syncOnce } = manualSyncs();
    const sync = groupSync(syncOnce);
    const first = sync();
    const second = sync();
    ends[0]!.reject(new Error('EIO'));
    await expect(first).rejects.toThrow('EIO');
    for (let i = 0; i < 5; i++) await Promise.resolve();
    // The second call's sync starts after the failed one, and it is the one that counts for it.
    expect(ends).toHaveLength(2);
    ends[1]!.resolve();
    await expect(second).resolves.toBeUndefined();
  });
});
