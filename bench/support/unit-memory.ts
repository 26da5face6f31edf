/**
 * The systemd unit's memory settings for the benches that run the daemon in their own process
 * (bench/support/in-process-daemon.ts): its `NODE_OPTIONS` (V8's young generation) and `MALLOC_*` lines
 * (docs/scaling.md, "Memory"), which V8 and glibc read only at start. `unitMemoryOrRestarted`
 * starts the bench again with them, as scripts/start.sh and the tests' daemon start the daemon; the
 * bench's own node flags come after the unit's and win (`node --max-semi-space-size=4 …` measures
 * another young generation). BENCH_UNIT_MEMORY=0: V8's and glibc's defaults instead.
 */
import { unitMemoryEnv } from '../../test/support/daemon-process.js';
import { restartWith } from './restart.js';

const APPLIED = 'BENCH_UNIT_MEMORY_APPLIED';

/** In a bench started with the unit's settings (or told not to): returns. Otherwise runs this same command again with them and exits with its status. */
export function unitMemoryOrRestarted(): void {
  // The MALLOC_* lines stay in the environment: a later restart (bench/support/bench-tls.ts) must start with them too. The
  // bench's children (the fake sites, the direct caller) inherit them, not the node flags.
  if (process.env.BENCH_UNIT_MEMORY === '0' || process.env[APPLIED] === '1') return;
  const { NODE_OPTIONS: nodeOptions = '', ...malloc } = unitMemoryEnv();
  restartWith({ flags: nodeOptions.split(/\s+/).filter(Boolean), env: { ...malloc, [APPLIED]: '1' } });
}

/** The node flags this process runs with (`--import tsx` left out) and glibc's settings from its environment, for a bench's first line. */
export function memorySettings(): string {
  const flags = process.execArgv.filter((flag, index, all) => flag !== '--import' && all[index - 1] !== '--import');
  const malloc = Object.entries(process.env).filter(([name]) => name.startsWith('MALLOC_'));
  return (
    `node flags: ${flags.length > 0 ? flags.join(' ') : 'none'}; ` +
    `glibc: ${malloc.length > 0 ? malloc.map(([name, value]) => `${name}=${value}`).join(' ') : 'defaults'}`
  );
}
