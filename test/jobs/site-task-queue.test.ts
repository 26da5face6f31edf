import { describe, expect, it } from 'vitest';
import { createSiteTaskQueue } from '../../src/jobs/site-task-queue.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('the site task queue', () => {
  it('runs one task at a time per site, in order, and sites in parallel up to the bound', async () => {
    const queue = createSiteTaskQueue({ concurrency: 2 });
    const running = new Map<string, number>();
    let maxPerSite = 0;
    let maxOverall = 0;
    const order: string[] = [];
    const task = (site: string, label: string) => async () => {
      running.set(site, (running.get(site) ?? 0) + 1);
      maxPerSite = Math.max(maxPerSite, running.get(site)!);
      maxOverall = Math.max(
        maxOverall,
        [...running.values()].reduce((a, b) => a + b, 0),
      );
      await tick();
      order.push(label);
      running.set(site, running.get(site)! - 1);
      return label;
    };
    const results = await Promise.all([
      queue.run('a', task('a', 'a1')),
      queue.run('a', task('a', 'a2')),
      queue.run('b', task('b', 'b1')),
      queue.run('c', task('c', 'c1')),
      queue.run('a', task('a', 'a3')),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b1', 'c1', 'a3']);
    expect(maxPerSite).toBe(1);
    expect(maxOverall).toBe(2);
    expect(order.filter((label) => label.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
  });

  it('keeps going after a failed task and reports the failure to its caller', async () => {
    const queue = createSiteTaskQueue({ concurrency: 1 });
    const failed = queue.run('a', async () => {
      throw new Error('boom');
    });
    const next = queue.run('a', async () => 'ok');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ok');
    expect(queue.isBusy('a')).toBe(false);
  });

  it('drains: waits for running work, refuses new work', async () => {
    const queue = createSiteTaskQueue({ concurrency: 1 });
    let finished = false;
    void queue.run('a', async () => {
      await tick();
      finished = true;
    });
    await tick();
    expect(await queue.drain(1_000)).toBe(true);
    expect(finished).toBe(true);
    await expect(queue.run('a', async () => 1)).rejects.toThrow(/shutting down/);
  });
});
