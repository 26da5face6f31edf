import { describe, expect, it } from 'vitest';
import { readAhead } from '../../src/backups/read-ahead.js';

async function* from<T>(items: T[]) {
  for (const item of items) yield item;
}
const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

describe('readAhead', () => {
  it('keeps order, passes through what needs no read, and never has more than the limit in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const load = (n: number) => {
      if (n % 5 === 0) return null;
      inFlight++;
      most = Math.max(most, inFlight);
      // Later items answer sooner: order must still hold.
      return tick(30 - n).then(() => {
        inFlight--;
        return n * 10;
      });
    };
    const seen: [number, number | undefined][] = [];
    for await (const pair of readAhead(from([...Array(25).keys()]), load, () => 1, { objects: 4, bytes: 100 }))
      seen.push(pair);
    expect(seen).toEqual([...Array(25).keys()].map((n) => [n, n % 5 === 0 ? undefined : n * 10]));
    expect(most).toBe(4);
  });

  it('reads ahead: 20 loads of 20 ms take about 5 windows, not 20 round trips', async () => {
    const started = Date.now();
    let count = 0;
    for await (const [, value] of readAhead(
      from([...Array(20).keys()]),
      (n) => tick(20).then(() => n),
      () => 1,
      {
        objects: 8,
        bytes: 1_000,
      },
    ))
      count += value === undefined ? 0 : 1;
    expect(count).toBe(20);
    expect(Date.now() - started).toBeLessThan(20 * 20);
  });

  it('holds to the byte budget, but always reads one however heavy', async () => {
    let inFlightBytes = 0;
    let most = 0;
    const weights = [6, 6, 6, 30, 1, 1];
    const load = (i: number) => {
      inFlightBytes += weights[i]!;
      most = Math.max(most, inFlightBytes);
      return tick().then(() => {
        inFlightBytes -= weights[i]!;
        return i;
      });
    };
    const seen: number[] = [];
    for await (const [i] of readAhead(from([0, 1, 2, 3, 4, 5]), load, (i) => weights[i]!, { objects: 8, bytes: 12 }))
      seen.push(i);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    // 30 alone is over the budget: it is read with nothing else in flight.
    expect(most).toBe(30);
  });

  it('throws a failed load where its item comes, after the ones before it', async () => {
    const seen: number[] = [];
    const run = async () => {
      for await (const [i] of readAhead(
        from([0, 1, 2, 3]),
        (i) => (i === 2 ? Promise.reject(new Error('object 2 is missing')) : tick().then(() => i)),
        () => 1,
        { objects: 4, bytes: 10 },
      ))
        seen.push(i);
    };
    await expect(run()).rejects.toThrow('object 2 is missing');
    expect(seen).toEqual([0, 1]);
  });

  it('a reader that stops early closes the source and leaves no rejection unobserved', async () => {
    let closed = false;
    async function* source() {
      try {
        for (let i = 0; ; i++) yield i;
      } finally {
        closed = true;
      }
    }
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      for await (const [i] of readAhead(
        source(),
        (i) => (i > 1 ? Promise.reject(new Error(`late ${i}`)) : Promise.resolve(i)),
        () => 1,
        { objects: 4, bytes: 10 },
      ))
        if (i === 1) break;
      await tick(20);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(closed).toBe(true);
    expect(unhandled).toEqual([]);
  });
});
