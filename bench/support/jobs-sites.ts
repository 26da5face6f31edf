/**
 * The sites of the cluster's jobs bench (bench/jobs.ts): real WordPress test sites, each its own `php -S` and
 * MariaDB database (the tests' sites: test/support/wordpress/), on one private MariaDB, with the connector active
 * and a media library of their own (random bytes), so that every backup reads, hashes, compresses and stores
 * files no other site has beside WordPress's own, which all sites share as an agency's do.
 */
import { join } from 'node:path';
import { generateMedia } from './bench-media.js';
import { startPrivateMariaDb } from '../../test/support/mariadb.js';
import { startPluginMirror } from '../../test/support/plugin-mirror.js';
import { FIXTURES_DIR } from '../../test/support/wordpress/paths.js';
import { provisionTestSite, type TestSite } from '../../test/support/wordpress/test-site.js';
import { installConnector } from '../../test/support/wordpress-state.js';
import { createRunDir, removeRunDir, siteFilesDir } from '../../test/support/work-dir.js';

export interface JobSites {
  sites: TestSite[];
  stop(): Promise<void>;
}

/** `count` sites with `mediaMb` MiB of media each, made two at a time. */
export async function startJobSites(count: number, mediaMb: number): Promise<JobSites> {
  const runDir = createRunDir();
  const mariadb = await startPrivateMariaDb({ dir: runDir });
  const mirror = await startPluginMirror({
    fixturesDir: join(FIXTURES_DIR, 'directory'),
    zipDir: join(runDir, 'mirror'),
    forks: [],
  });
  const bed = {
    mariadbSocket: mariadb.socketPath,
    pluginMirrorUrl: mirror.url,
    testWorkDir: runDir,
    sitesDir: siteFilesDir(runDir),
  };
  const sites: TestSite[] = [];
  const stop = async () => {
    for (const site of sites) await site.stop();
    await mirror.close();
    await mariadb.stop();
    removeRunDir(runDir);
  };
  try {
    for (let made = 0; made < count; made += 2) {
      await Promise.all(
        Array.from({ length: Math.min(2, count - made) }, async () => {
          const site = await provisionTestSite(bed);
          sites.push(site);
          await installConnector(site);
          generateMedia(site.root, mediaMb);
        }),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { sites, stop };
}
