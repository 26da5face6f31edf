/** Runs `work` over `items` with at most `limit` at once; the first failure stops new work and is thrown. */
export async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        await work(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const rejected = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (rejected) throw rejected.reason;
}

/**
 * Backups and restores share the object store (shared); garbage collection must see no
 * job in the middle of deciding which objects it reuses (exclusive).
 */
export function createStoreLock() {
  let shared = 0;
  let exclusive: Promise<void> | null = null;
  let drained: (() => void) | null = null;

  return {
    async shared<T>(work: () => Promise<T>): Promise<T> {
      while (exclusive) await exclusive;
      shared++;
      try {
        return await work();
      } finally {
        shared--;
        if (shared === 0) drained?.();
      }
    },
    async exclusive<T>(work: () => Promise<T>): Promise<T> {
      while (exclusive) await exclusive;
      let release!: () => void;
      exclusive = new Promise<void>((resolve) => (release = resolve));
      try {
        if (shared > 0) await new Promise<void>((resolve) => (drained = resolve));
        drained = null;
        return await work();
      } finally {
        exclusive = null;
        release();
      }
    },
  };
}

export type StoreLock = ReturnType<typeof createStoreLock>;
