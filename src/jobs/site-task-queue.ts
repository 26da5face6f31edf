import PQueue from 'p-queue';

/**
 * Work on remote sites: one task at a time per site (WordPress's upgrader is not built for
 * concurrent runs), different sites in parallel up to a global bound.
 */
export interface SiteTaskQueue {
  run<T>(siteId: string, task: () => Promise<T>): Promise<T>;
  /** Tasks waiting or running for a site. */
  isBusy(siteId: string): boolean;
  readonly size: number;
  /** Tasks finished so far, successfully or not (readiness watches it move). */
  readonly completed: number;
  /** Stops starting new tasks and waits up to `graceMs` for running ones. Returns true if they all finished. */
  drain(graceMs: number): Promise<boolean>;
}

export function createSiteTaskQueue({ concurrency }: { concurrency: number }): SiteTaskQueue {
  const queue = new PQueue({ concurrency });
  const tails = new Map<string, Promise<unknown>>();
  let accepting = true;
  let completed = 0;

  return {
    run(siteId, task) {
      if (!accepting) return Promise.reject(new Error('the daemon is shutting down'));
      const previous = tails.get(siteId) ?? Promise.resolve();
      const result = previous.then(
        () => queue.add(task),
        () => queue.add(task),
      ) as Promise<Awaited<ReturnType<typeof task>>>;
      const tail = result.catch(() => undefined).finally(() => void completed++);
      tails.set(siteId, tail);
      void tail.then(() => {
        if (tails.get(siteId) === tail) tails.delete(siteId);
      });
      return result;
    },
    isBusy: (siteId) => tails.has(siteId),
    get size() {
      return queue.size + queue.pending;
    },
    get completed() {
      return completed;
    },
    async drain(graceMs) {
      accepting = false;
      queue.pause();
      queue.clear();
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        queue.onPendingZero().then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), graceMs);
        }),
      ]);
      clearTimeout(timer);
      return finished;
    },
  };
}
