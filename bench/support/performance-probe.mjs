/* global process, setInterval */
// Loaded into the daemon by bench/performance.ts (NODE_OPTIONS=--import): every 500 ms it writes
// the daemon's event-loop delay and memory to PERF_PROBE_FILE. Audit workers inherit
// NODE_OPTIONS, so only the daemon (`cli.js start`) measures.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.PERF_PROBE_FILE;
if (file && process.argv[1]?.endsWith('cli.js') && process.argv[2] === 'start') {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let resets = 0;
  process.on('SIGUSR2', () => {
    histogram.reset();
    resets++;
  });
  const ms = (ns) => Math.round((ns / 1e6) * 100) / 100;
  setInterval(() => {
    const { rss, heapUsed } = process.memoryUsage();
    writeFileSync(
      file,
      JSON.stringify({
        resets,
        p50: ms(histogram.percentile(50)),
        p99: ms(histogram.percentile(99)),
        max: ms(histogram.max),
        rss,
        heapUsed,
      }),
    );
  }, 500).unref();
}
