import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old space grow past what its last full collection left alive before it
 * collects again: 100 %, twice the live heap. Left to itself on a machine with a few GB, V8 lets
 * it grow up to four times: a daemon with ~35 MB alive then carried 95–107 MB of heap, most of it
 * garbage, through a backup of a 1 GB site (bench/backups.ts; docs/benchmarks.md, "Daemon memory").
 * The flag is read at every full collection, so setting it at start-up holds from the first one.
 */
const HEAP_GROWING_PERCENT = 100;

/** Limits the heap's growth unless the daemon was started with its own `--heap-growing-percent`. */
export function limitHeapGrowth(): void {
  if (process.execArgv.some((argument) => argument.startsWith('--heap-growing-percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
