/** The main thread's garbage-collection pauses, by kind, between two readings (perf_hooks' `gc` entries). For the benches' BENCH_THREADS=1. */
import { constants, PerformanceObserver } from 'node:perf_hooks';

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/** Every pause since the observer started: its kind and length (ms). */
const pauses: { kind: string; ms: number }[] = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    pauses.push({
      kind: KINDS[(entry as unknown as { detail: { kind: number } }).detail.kind] ?? 'other',
      ms: entry.duration,
    });
});
observer.observe({ entryTypes: ['gc'] });

/** Where the pauses stand now: pass it to `pausesSince`. */
export const gcMark = (): number => pauses.length;

/**
 * The pauses since `mark`, per unit (`units`: the site updates) by kind: how many and how long. The entries arrive
 * after their pause, on the event loop, so read it after the work's last await.
 */
export async function pausesSince(mark: number, units: number): Promise<string> {
  await new Promise((resolve) => setImmediate(resolve));
  const byKind = new Map<string, { count: number; ms: number }>();
  for (const { kind, ms } of pauses.slice(mark)) {
    const sum = byKind.get(kind) ?? { count: 0, ms: 0 };
    byKind.set(kind, { count: sum.count + 1, ms: sum.ms + ms });
  }
  return (
    [...byKind].map(([kind, { count, ms }]) => `${kind} ${count} (${(ms / units).toFixed(3)} ms)`).join(', ') || 'none'
  );
}
