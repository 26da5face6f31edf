import { isAppError } from '../shared/errors.js';
import type { ConnectedSite, SiteAccess } from '../wordpress/site-access.js';
import type { RollbackPaths } from './rollback-path.js';
import { readItem, takeRestorePoint } from './safe-update-flow.js';
import { safeUpdatesProblems } from './safe-updates.errors.js';

/** A restore point the connector took: the saved copy's id and the plugin file or theme it puts back. */
export interface RestorePointRef {
  id: string;
  target: string;
}

/** Before a plain update: the restore point, or why none was taken (the update goes on without one). */
export type PlainRestorePoint = { restorePoint: RestorePointRef } | { restorePoint: null; reason: string };

/**
 * The cheap restore point a plain (unchecked) plugin or theme update takes first, the one a safe
 * update takes (a copy of the item's folder), and putting it back through the standalone rollback
 * path, which works when every WordPress request ends in a fatal error.
 */
export function createPlainRestorePoints({
  access,
  paths,
  operationTimeoutMs,
}: {
  access: Pick<SiteAccess, 'read' | 'operate'>;
  paths: RollbackPaths;
  operationTimeoutMs: number;
}) {
  /**
   * On a site the caller holds (a bulk update's held pass). `target`: the plugin file (dir/file.php)
   * or theme stylesheet when the caller knows it (one request less); else WordPress is asked. Never throws.
   */
  async function beforeOn(
    site: ConnectedSite,
    type: 'plugin' | 'theme',
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

  return {
    beforeOn,

    /** Before a plain update of the site's plugin or theme. Never throws (a site that cannot be reached says why). */
    before: (siteId: string, type: 'plugin' | 'theme', slug: string): Promise<PlainRestorePoint> =>
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
