import fc from 'fast-check';
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

  it('holds its rules for any tasks: one per site in order, at most the bound at once, every one run once', async () => {
    const turns = () => new Promise<void>((resolve) => setImmediate(resolve));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.record({ site: fc.constantFrom('a', 'b', 'c', 'd', 'e'), turns: fc.nat(3), fails: fc.boolean() }), {
          maxLength: 40,
        }),
        async (concurrency, tasks) => {
          const queue = createSiteTaskQueue({ concurrency });
          const running = new Set<string>();
          let most = 0;
          const started: number[] = [];
          const outcomes = await Promise.allSettled(
            tasks.map((task, index) =>
              queue.run(task.site, async () => {
                expect(running.has(task.site)).toBe(false);
                running.add(task.site);
                most = Math.max(most, running.size);
                started.push(index);
                for (let turn = 0; turn < task.turns; turn++) await turns();
                running.delete(task.site);
                if (task.fails) throw new Error(`task ${index}`);
                return index;
              }),
            ),
          );
          expect(most).toBeLessThanOrEqual(concurrency);
          expect([...started].sort((x, y) => x - y)).toEqual(tasks.map((_, index) => index));
          for (const site of new Set(tasks.map((task) => task.site))) {
            const ofSite = tasks.flatMap((task, index) => (task.site === site ? [index] : []));
            expect(started.filter((index) => tasks[index]!.site === site)).toEqual(ofSite);
          }
          outcomes.forEach((outcome, index) =>
            expect(outcome).toEqual(
              tasks[index]!.fails
                ? { status: 'rejected', reason: new Error(`task ${index}`) }
                : { status: 'fulfilled', value: index },
            ),
          );
          expect(queue.size).toBe(0);
          expect(queue.completed).toBe(tasks.length);
          for (const site of ['a', 'b', 'c', 'd', 'e']) expect(queue.isBusy(site)).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('never runs a task that was waiting when it drained, and never starts one in its caller’s turn', async () => {
    const queue = createSiteTaskQueue({ concurrency: 1 });
    const ran: string[] = [];
    let release!: () => void;
    const first = queue.run('a', async () => {
      ran.push('a1');
      await new Promise<void>((resolve) => (release = resolve));
    });
    expect(ran).toEqual([]);
    void queue.run('a', async () => void ran.push('a2'));
    void queue.run('b', async () => void ran.push('b1'));
    await tick();
    expect(queue.size).toBe(2);
    const drained = queue.drain(1_000);
    release();
    expect(await drained).toBe(true);
    await first;
    await tick();
    expect(ran).toEqual(['a1']);
  });
});
