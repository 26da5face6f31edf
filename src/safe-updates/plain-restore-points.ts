import { isAppError } from '../shared/errors.js';
import type { PlainRestorePoint, RestorePointRef } from '../update-history/index.js';
import type { ConnectedSite, SiteAccess } from '../wordpress/site-access.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import { createRestorePoints } from '../wordpress/rollback-client.js';
import { findFatalMarker } from './health-check.js';
import type { RollbackPaths } from './rollback-path.js';
import { readItem, takeRestorePoint } from './safe-update-flow.js';
import { safeUpdatesProblems } from './safe-updates.errors.js';

/** What the front page answered after plain updates: healthy, or the status and problem that say it broke. */
export type FrontPageProbe = { healthy: true } | { healthy: false; status: number; problem: string; url: string };

/** The front page probe after plain updates: one GET, this long at most, this much read at most (the site is untrusted). */
const PROBE_TIMEOUT_MS = 15_000;
const PROBE_MAX_BYTES = 2 * 1024 * 1024;

/**
 * The cheap restore point a plain (unchecked) plugin, theme or core update takes first, the one a
 * safe update takes (a copy of the item's folder; for core, of `wp-admin`, `wp-includes` and the root
 * PHP files), and putting it back through the standalone rollback path, which works when every
 * WordPress request ends in a fatal error.
 */
export function createPlainRestorePoints({
  access,
  paths,
  operationTimeoutMs,
  http,
}: {
  access: Pick<SiteAccess, 'read' | 'operate'>;
  paths: RollbackPaths;
  operationTimeoutMs: number;
  /** For the front page probe after plain updates (none: no probe). */
  http?: SiteHttp;
}) {
  /**
   * On a site the caller holds (a bulk update's held pass). `target`: the plugin file (dir/file.php)
   * or theme stylesheet when the caller knows it (one request less); else WordPress is asked (core:
   * its version through the connector, the target is `core`). Never throws.
   */
  async function beforeOn(
    site: ConnectedSite,
    type: 'plugin' | 'theme' | 'core',
    slug: string,
    target?: string,
  ): Promise<PlainRestorePoint> {
    try {
      const item = target ? { target } : await readItem(site, type, slug);
      if (!item) return { restorePoint: null, reason: `${site.site.url} has no ${type} ${slug}` };
      // The path must answer with our secret before anything is saved: a copy nobody can put back is no use.
      await paths.rollbackPath(site);
      const point = await takeRestorePoint({ operationTimeoutMs }, site, type, item.target);
      return { restorePoint: { id: point.id, target: point.target } };
    } catch (error) {
      return {
        restorePoint: null,
        reason: isAppError(error) ? `${error.problem.name}: ${error.detail}` : String(error),
      };
    }
  }

  /**
   * After plain updates, which check nothing: one GET of the front page (as a safe update's page
   * check, bounded). Unhealthy when it answers 5xx or WordPress's (or PHP's) fatal error text; a
   * site that cannot be reached, or answers otherwise, is not put down to the update (null: no probe made).
   */
  async function probeFrontPage(siteId: string): Promise<FrontPageProbe | null> {
    if (!http) return null;
    try {
      const url = await access.read(siteId, async (site) => `${site.site.url.replace(/\/+$/, '')}/`);
      const response = await http.request({
        url,
        timeoutMs: PROBE_TIMEOUT_MS,
        maxBytes: PROBE_MAX_BYTES,
        followRedirects: false,
      });
      const fatal = findFatalMarker(response.text());
      if (response.status >= 500 || fatal)
        return {
          healthy: false,
          status: response.status,
          problem: fatal ? 'fatal-error' : `http-${response.status}`,
          url,
        };
      return { healthy: true };
    } catch {
      return null;
    }
  }

  return {
    beforeOn,
    probeFrontPage,

    /** Before a plain update of the site's plugin, theme or core (slug `wordpress`). Never throws (a site that cannot be reached says why). */
    before: (siteId: string, type: 'plugin' | 'theme' | 'core', slug: string): Promise<PlainRestorePoint> =>
      Promise.resolve()
        .then(() => access.read(siteId, (site) => beforeOn(site, type, slug)))
        .catch((error: unknown) => ({ restorePoint: null, reason: isAppError(error) ? error.detail : String(error) })),

    /**
     * The version of a plugin (its file, dir/file.php) or theme (its stylesheet) on the site's disk,
     * read through the standalone path without WordPress (after an update WordPress may no longer
     * answer). Null: not there; undefined: the path cannot tell (connector before 1.7.0, no secret,
     * unreachable). Never throws.
     */
    versionOnDisk: (siteId: string, type: 'plugin' | 'theme', file: string): Promise<string | null | undefined> =>
      Promise.resolve()
        .then(() =>
          access.read(siteId, async (site) => {
            const answer = await (await paths.rollbackPath(site)).version(`${type}s/${file}`);
            return answer.status === 200 ? answer.version : undefined;
          }),
        )
        .catch(() => undefined),

    /**
     * Removes a restore point no update followed (the update was refused before anything changed:
     * nothing on offer), through the connector; a core copy is tens of megabytes. Never throws.
     */
    discard: (siteId: string, point: RestorePointRef): Promise<void> =>
      Promise.resolve()
        .then(() =>
          access.read(siteId, (site) =>
            createRestorePoints(site.session, { timeoutMs: operationTimeoutMs }).discard(point.id),
          ),
        )
        .then(
          () => undefined,
          () => undefined,
        ),

    /**
     * Puts the restore point back without WordPress (its secret is already on the site), in the
     * site's turn; the inventory is read again after. Throws `restore-point-not-restored` when the
     * path refused, `rollback-path-unavailable` when it cannot be used.
     */
    rollBack: (siteId: string, point: RestorePointRef): Promise<void> =>
      access.operate(siteId, async (site) => {
        const standalone = await paths.rollbackPath(site);
        const answer = await standalone.restore(point.id, point.target);
        if (answer.status !== 200)
          throw safeUpdatesProblems.notRestored.create(
            `${standalone.url} answered ${answer.status}${answer.code ? ` (${answer.code})` : ''} for ${point.target} from ${point.id}`,
          );
      }),
  };
}

export type PlainRestorePoints = ReturnType<typeof createPlainRestorePoints>;
