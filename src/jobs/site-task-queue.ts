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

/**
 * A p-queue bounds the sites at once; each site's tasks wait in its lane, and the next one goes
 * to the queue when the one before it ends (a callback, not a chain of promises per task: every
 * site operation passes through here, twice for a bulk site update).
 */
export function createSiteTaskQueue({ concurrency }: { concurrency: number }): SiteTaskQueue {
  const queue = new PQueue({ concurrency });
  /** Each busy site's tasks waiting behind the one it has in the queue. */
  const lanes = new Map<string, (() => void)[]>();
  let accepting = true;
  let completed = 0;

  function ended(siteId: string): void {
    completed++;
    const next = lanes.get(siteId)?.shift();
    if (next) next();
    else lanes.delete(siteId);
  }

  return {
    run<T>(siteId: string, task: () => Promise<T>): Promise<T> {
      if (!accepting) return Promise.reject(new Error('the daemon is shutting down'));
      return new Promise<T>((resolve, reject) => {
        const start = () =>
          void queue.add(task).then(
            (value) => {
              ended(siteId);
              resolve(value);
            },
            (error: unknown) => {
              ended(siteId);
              reject(error as Error);
            },
          );
        const lane = lanes.get(siteId);
        if (lane) lane.push(start);
        else {
          lanes.set(siteId, []);
          // Never in the caller's turn: a task may use what its caller sets up after the call.
          queueMicrotask(start);
        }
      });
    },
    isBusy: (siteId) => lanes.has(siteId),
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
