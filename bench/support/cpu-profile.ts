import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * A CPU profile of this process from now until the function returned is called, which writes it to `file`
 * (a .cpuprofile: Chrome's DevTools, or bench/lab/profile-summary.ts). For a measured span alone, without
 * the start-up a whole-process `--cpu-prof` would include.
 */
export async function startCpuProfile(file: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}
