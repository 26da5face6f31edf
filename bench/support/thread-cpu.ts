/** CPU by thread, read from /proc (Linux): the main thread, V8's workers, libuv's pool. For the benches' BENCH_THREADS=1. */
import { readdirSync, readFileSync } from 'node:fs';

/** Each thread's CPU so far (ns), by its id, with its name (`comm`). */
export function threadsNs(): Map<string, { name: string; ns: number }> {
  const threads = new Map<string, { name: string; ns: number }>();
  for (const id of readdirSync('/proc/self/task'))
    try {
      const comm = readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim();
      // Node's threads keep the process's name: the main thread is named apart, the others by id.
      const name = id === String(process.pid) ? 'main' : comm === 'node' ? `thread ${id}` : comm;
      threads.set(id, { name, ns: Number(readFileSync(`/proc/self/task/${id}/schedstat`, 'utf8').split(' ')[0]) });
    } catch {
      // The thread ended meanwhile.
    }
  return threads;
}

/** CPU per unit (ms; `units`: the site updates) by thread name between two readings, the largest first. */
export function threadsBetween(
  before: ReturnType<typeof threadsNs>,
  after: ReturnType<typeof threadsNs>,
  units: number,
): string {
  const byName = new Map<string, number>();
  for (const [id, { name, ns }] of after) byName.set(name, (byName.get(name) ?? 0) + ns - (before.get(id)?.ns ?? 0));
  return [...byName]
    .filter(([, ns]) => ns > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ns]) => `${name} ${(ns / 1e6 / units).toFixed(3)}`)
    .join(', ');
}
