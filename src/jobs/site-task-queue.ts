import { AsyncLocalStorage } from 'node:async_hooks';
import PQueue from 'p-queue';

/**
 * The site whose work is bounded by a slot of its own (a bulk site update holds a bulk update slot,
 * `SITEWARDEN_BULK_UPDATE_CONCURRENCY`): that site's tasks started from the work skip the queue's
 * global bound, so one bound is not counted twice, and still take their turn on the site. Keyed by
 * the site: other sites' tasks, and the job runner's pools (lanes `site:<id>`, `job:<id>`), keep their bound.
 */
const ownBound = new AsyncLocalStorage<string>();
export const underOwnBound = <T>(siteId: string, work: () => Promise<T>): Promise<T> => ownBound.run(siteId, work);

/**
 * Work on remote sites: one task at a time per site (WordPress's upgrader is not built for
 * concurrent runs), different sites in parallel up to a global bound (but work under its own bound).
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
  /** Tasks running outside the global bound (underOwnBound). */
  const outside = new Set<Promise<unknown>>();
  let accepting = true;
  let completed = 0;

  function runOutside<T>(task: () => Promise<T>): Promise<T> {
    if (!accepting) return Promise.reject(new Error('the daemon is shutting down'));
    const running = Promise.resolve().then(task);
    const tracked: Promise<unknown> = running.then(
      () => outside.delete(tracked),
      () => outside.delete(tracked),
    );
    outside.add(tracked);
    return running;
  }

  function ended(siteId: string): void {
    completed++;
    const next = lanes.get(siteId)?.shift();
    if (next) next();
    else lanes.delete(siteId);
  }

  return {
    run<T>(siteId: string, task: () => Promise<T>): Promise<T> {
      if (!accepting) return Promise.reject(new Error('the daemon is shutting down'));
      const bounded = ownBound.getStore() !== siteId;
      return new Promise<T>((resolve, reject) => {
        const start = () =>
          void (bounded ? queue.add(task) : runOutside(task)).then(
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
      return queue.size + queue.pending + outside.size;
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
        Promise.all([queue.onPendingZero(), ...outside]).then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), graceMs);
        }),
      ]);
      clearTimeout(timer);
      return finished;
    },
  };
}
