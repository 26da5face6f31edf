/** Starting a bench again (bench/support/bench-tls.ts, bench/support/unit-memory.ts): for settings Node or glibc read only at start. */
import { spawnSync } from 'node:child_process';

/**
 * Runs this same command again, `flags` before its own node flags and `env` over its environment (its output is this
 * one's), then `cleanUp`, and exits with its status.
 */
export function restartWith({
  flags = [],
  env,
  cleanUp,
}: {
  flags?: string[];
  env: Record<string, string>;
  cleanUp?: () => void;
}): never {
  const again = spawnSync(process.execPath, [...flags, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  cleanUp?.();
  if (again.error) console.error(`the bench could not be started again: ${again.error.message}`);
  if (again.signal) console.error(`the bench was stopped by ${again.signal}`);
  process.exit(again.status ?? 1);
}
