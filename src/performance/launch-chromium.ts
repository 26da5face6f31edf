import { spawn, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { LaunchedChrome, Options } from 'chrome-launcher';

/** util-linux's `setpriv`, on every Debian system (util-linux is essential). */
const SETPRIV = '/usr/bin/setpriv';

/**
 * The command that starts `execPath` so that the kernel kills it when the process that started it
 * dies, even by SIGKILL (Linux's parent-death signal, kept across `setpriv`'s exec): chrome-launcher
 * starts Chromium as the leader of its own process group, which nothing kills when the daemon (or
 * an audit worker) is killed outright. Without `setpriv` (not Linux) the command is unchanged.
 */
export function diesWithParent(
  execPath: string,
  args: readonly string[],
  setpriv = SETPRIV,
): { command: string; args: string[] } {
  if (!existsSync(setpriv)) return { command: execPath, args: [...args] };
  return { command: setpriv, args: ['--pdeathsig', 'KILL', '--', execPath, ...args] };
}

/**
 * chrome-launcher's `launch`, with Chromium tied to the life of this process: the one way the daemon
 * (screenshots) and the audit worker (Lighthouse) start Debian's Chromium. `setpriv` replaces itself
 * with Chromium, so the pid chrome-launcher reports (and kills by group) is Chromium's.
 */
export async function launchChromium(options: Options): Promise<LaunchedChrome> {
  const { Launcher } = await import('chrome-launcher');
  const launcher = new Launcher(options, {
    spawn: ((execPath: string, args: readonly string[], spawnOptions: SpawnOptions) => {
      const wrapped = diesWithParent(execPath, args);
      return spawn(wrapped.command, wrapped.args, spawnOptions);
    }) as typeof spawn,
  });
  try {
    await launcher.launch();
  } catch (error) {
    launcher.kill();
    throw error;
  }
  return {
    pid: launcher.pid!,
    port: launcher.port!,
    process: launcher.chromeProcess!,
    remoteDebuggingPipes: launcher.remoteDebuggingPipes,
    kill: () => launcher.kill(),
  };
}
