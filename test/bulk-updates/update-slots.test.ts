import { describe, expect, it } from 'vitest';
import { createUpdateSlots, hostOf } from '../../src/bulk-updates/update-slots.js';

describe('the update slots every bulk update shares', () => {
  it('bound the sites of one host, and all sites together, separately', () => {
    const slots = createUpdateSlots({ concurrency: 3, perHost: 2 });
    expect([slots.tryTake('a'), slots.tryTake('a'), slots.tryTake('a')]).toEqual([true, true, false]);
    // Another host still has room until the global bound is reached.
    expect([slots.tryTake('b'), slots.tryTake('b')]).toEqual([true, false]);
    slots.release('a');
    expect([slots.tryTake('b'), slots.tryTake('a')]).toEqual([true, false]);
  });

  it('wakes whoever waits at the next release', async () => {
    const slots = createUpdateSlots({ concurrency: 1, perHost: 1 });
    expect(slots.tryTake('a')).toBe(true);
    let woken = false;
    const waiting = slots.released().then(() => (woken = true));
    expect(woken).toBe(false);
    slots.release('a');
    await waiting;
    expect(slots.tryTake('b')).toBe(true);
  });

  it('take the host from the site URL, without port or case', () => {
    expect(hostOf('https://Shop.Example.test:8443/blog')).toBe('shop.example.test');
    expect(hostOf('http://127.0.0.1:8080')).toBe('127.0.0.1');
  });
});
