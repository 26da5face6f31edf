import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../processes.js';
import type { WordPressRelease } from './releases.js';

/**
 * A run's installed database of each release, made once (issue 36): the first test site of a release
 * installs WordPress with install.php as before, and its database, dumped right after, is what every
 * later site of the run imports instead. An import takes about a tenth of a second; install.php took
 * half a second and a php-cli process that compiles WordPress. finish-site.php then makes the copy the
 * site's own (URL, title, admin password, permalinks, application password), as it does for the first.
 *
 * No site waits for another: while a release has no template yet, a site installs its own, and the
 * first to claim the template's lock file dumps its database.
 */
export interface SiteTemplates {
  /** The release's dump, once a site of this run has made it. */
  find(release: WordPressRelease): string | undefined;
  /** Dumps a freshly installed database as the release's template, unless another site claimed that. */
  save(release: WordPressRelease, dbName: string): Promise<void>;
}

interface MariaDb {
  mariadbSocket: string;
}

/** One run's templates, kept in `dir` (shared by the run's vitest workers) and cached by this process. */
export function siteTemplates(db: MariaDb, dir: string): SiteTemplates {
  const file = (release: WordPressRelease) => join(dir, `${release}.sql`);
  return {
    find(release) {
      const cached = loaded.get(file(release));
      if (cached !== undefined) return cached;
      if (!existsSync(file(release))) return undefined;
      const dump = readFileSync(file(release), 'utf8');
      loaded.set(file(release), dump);
      return dump;
    },
    async save(release, dbName) {
      mkdirSync(dir, { recursive: true });
      try {
        closeSync(openSync(`${file(release)}.lock`, 'wx'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
        throw error;
      }
      const { stdout } = await runCommand('mariadb-dump', [
        '--no-defaults',
        `--socket=${db.mariadbSocket}`,
        '-uroot',
        '--skip-dump-date',
        '--single-transaction',
        dbName,
      ]);
      // Renamed into place whole: another worker reading it never sees half a dump.
      writeFileSync(`${file(release)}.partial`, stdout);
      renameSync(`${file(release)}.partial`, file(release));
    },
  };
}

/** Creates `dbName` holding what `dump` holds. */
export async function importTemplate(db: MariaDb, dbName: string, dump: string): Promise<void> {
  await runCommand('mariadb', ['--no-defaults', `--socket=${db.mariadbSocket}`, '-uroot'], {
    input: `CREATE DATABASE \`${dbName}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;\nUSE \`${dbName}\`;\n${dump}`,
    label: `mariadb: import the site template into ${dbName}`,
  });
}

const loaded = new Map<string, string>();
