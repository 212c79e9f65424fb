import { describe, expect, it } from 'vitest';
import { SignInThrottle } from './throttle.js';

describe('SignInThrottle', () => {
  const options = {
    freeFailures: 3,
    baseDelayMs: 1000,
    maxDelayMs: 8000,
    forgetAfterMs: 60_000,
    maxEntries: 3,
  };

  it('lets the free failures pass, then doubles the wait with every failure up to the cap', () => {
    let now = 0;
    const throttle = new SignInThrottle(options, () => now);
    const key = [{ key: 'email:a' }];
    throttle.fail(['email:a', 'email:a', 'email:a'].slice(0, 2));
    expect(throttle.waitFor(key)).toBe(0);
    throttle.fail(['email:a']);
    expect(throttle.waitFor(key)).toBe(1000);
    now = 1000;
    expect(throttle.waitFor(key)).toBe(0);
    throttle.fail(['email:a']);
    expect(throttle.waitFor(key)).toBe(2000);
    for (let i = 0; i < 10; i++) throttle.fail(['email:a']);
    expect(throttle.waitFor(key)).toBe(8000);
  });

  it('clears a key on success and forgets failures after a while', () => {
    let now = 0;
    const throttle = new SignInThrottle(options, () => now);
    for (let i = 0; i < 5; i++) throttle.fail(['email:a', 'ip:1']);
    throttle.succeed('email:a');
    expect(throttle.waitFor([{ key: 'email:a' }])).toBe(0);
    expect(throttle.waitFor([{ key: 'ip:1' }])).toBeGreaterThan(0);
    expect(throttle.waitFor([{ key: 'ip:1', freeFailures: 10 }])).toBe(0);
    now = 61_000;
    expect(throttle.waitFor([{ key: 'ip:1' }])).toBe(0);
  });

  it('keeps at most maxEntries keys, dropping the oldest failure first', () => {
    const throttle = new SignInThrottle({ ...options, freeFailures: 0 }, () => 0);
    for (const key of ['a', 'b', 'c', 'd']) throttle.fail([key]);
    expect(throttle.waitFor([{ key: 'a' }])).toBe(0);
    expect(throttle.waitFor([{ key: 'd' }])).toBeGreaterThan(0);
  });
});
