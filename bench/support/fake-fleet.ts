/**
 * Fake WordPress sites for the bulk-update benchmarks (test/bulk-updates/updatable-fake.ts), in a
 * child process of their own, so their CPU is not the daemon's. Each site's akismet plugin goes
 * 1.0.0 → 1.1.0 when updated, after `updateMs` on the site.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SiteTls } from '../../test/support/fake-wordpress/loopback-server.js';

export interface FakeSite {
  url: string;
  username: string;
  applicationPassword: string;
}

const once = (child: ChildProcess) => new Promise<unknown>((resolve) => child.once('message', resolve));

/**
 * Starts `count` fake sites (with connector `connector`, default the one whose updates take the version expected),
 * over HTTPS with `tls` (bench/support/bench-tls.ts).
 */
export async function startFakeFleet({
  count,
  updateMs,
  connector,
  tls,
}: {
  count: number;
  updateMs: number;
  connector?: string;
  tls?: SiteTls;
}) {
  const child = fork(import.meta.filename, ['serve'], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
    env: {
      ...process.env,
      FLEET_SITES: String(count),
      FLEET_UPDATE_MS: String(updateMs),
      FLEET_CONNECTOR: connector ?? '',
      FLEET_TLS_KEY: tls?.key ?? '',
      FLEET_TLS_CERT: tls?.cert ?? '',
    },
  });
  const sites = (await once(child)) as FakeSite[];
  return {
    sites,
    /** Puts every site's plugin back to 1.0.0. */
    async reset(): Promise<void> {
      child.send('reset');
      await once(child);
    },
    /** The requests the sites got since the last call. */
    async requests(): Promise<number> {
      child.send('count');
      return (await once(child)) as number;
    },
    close: () => void child.kill(),
  };
}

/** The child: the sites, answering `reset` and `count`. */
async function serve(): Promise<void> {
  const { createUpdateWatch, startUpdatableSite } = await import('../../test/bulk-updates/updatable-fake.js');
  const watch = createUpdateWatch();
  const updateMs = Number(process.env.FLEET_UPDATE_MS);
  watch.hold = () => sleep(updateMs);
  const connector = process.env.FLEET_CONNECTOR || undefined;
  const { FLEET_TLS_KEY: key, FLEET_TLS_CERT: cert } = process.env;
  const tls = key && cert ? { key, cert } : undefined;
  const started = await Promise.all(
    Array.from({ length: Number(process.env.FLEET_SITES) }, () => startUpdatableSite(watch, { connector, tls })),
  );
  let counted = 0;
  process.on('message', (message) => {
    if (message === 'count') {
      const total = started.reduce((sum, { site }) => sum + site.requests.length, 0);
      process.send!(total - counted);
      counted = total;
    }
    if (message === 'reset') {
      for (const { state } of started) state.plugin = '1.0.0';
      process.send!('reset');
    }
  });
  process.send!(
    started.map(({ site }): FakeSite => ({
      url: site.url,
      username: site.username,
      applicationPassword: site.applicationPassword,
    })),
  );
}

if (process.argv[2] === 'serve') await serve();
