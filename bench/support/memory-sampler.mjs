/* global process, setInterval */
/**
 * Loaded into the daemon by bench/backups.ts (NODE_OPTIONS=--import) when BENCH_MEMORY_LOG is set:
 * every 250 ms one line of its RSS and V8 figures (MiB), so each phase's peak can be told apart
 * (RSS against heap, heap against ArrayBuffers). bench/support/performance-probe.mjs is its twin for the
 * event loop (the latest figures, not a series). Audit workers inherit NODE_OPTIONS, so only the
 * daemon (`cli.js start`) samples. Not part of the daemon.
 */
import { appendFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';

const log = process.env.BENCH_MEMORY_LOG;
if (log && process.argv[1]?.endsWith('cli.js') && process.argv[2] === 'start') {
  const mib = (bytes) => Math.round(bytes / 104857.6) / 10;
  const timer = setInterval(() => {
    const usage = process.memoryUsage();
    const heap = getHeapStatistics();
    appendFileSync(
      log,
      `${JSON.stringify({
        pid: process.pid,
        t: Date.now(),
        rss: mib(usage.rss),
        heapTotal: mib(usage.heapTotal),
        heapUsed: mib(usage.heapUsed),
        external: mib(usage.external),
        arrayBuffers: mib(usage.arrayBuffers),
        malloced: mib(heap.malloced_memory),
      })}\n`,
    );
  }, 250);
  timer.unref();
}
