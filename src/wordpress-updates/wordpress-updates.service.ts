import { rethrowSiteOperation } from '../inventory/index.js';
import type { Events } from '../shared/event-bus.js';
import { isAppError, isProblem } from '../shared/errors.js';
import type { ConnectedSite, SiteAccess } from '../wordpress/site-access.js';
import { wordpressUpdatesProblems } from './wordpress-updates.errors.js';
import type { RequestedBy } from '../shared/actor.js';
import type { SingleSiteRecording } from '../update-history/index.js';

export interface TranslationsUpdate {
  updated: { type: 'core' | 'plugin' | 'theme'; slug: string; language: string; version: string }[];
  failed: { type: 'core' | 'plugin' | 'theme'; slug: string; language: string; message: string }[];
}

/**
 * Whether the update can be rolled back: its history entry `updateId` and the restore point it took
 * first (a copy of wp-admin, wp-includes and the root PHP files), or why none was taken.
 */
type CoreRollback =
  | { available: true; updateId: string; restorePoint: { id: string; target: string } }
  | { available: false; reason: string };

export interface CoreUpdate {
  previousVersion: string;
  version: string;
  databaseUpgraded: boolean;
  rollback: CoreRollback;
}

/** An update not recorded takes no restore point: the update history takes one first and answers with it. */
const NOT_RECORDED_ROLLBACK: CoreRollback = {
  available: false,
  reason: 'no restore point was taken: the update was made without the update history, which takes one first',
};

/**
 * WordPress core (and translation) updates on one site, through the connector and WordPress's own
 * upgraders. One call is one site: a bulk update calls these per site, under the same rules.
 */
export function createWordPressUpdatesService({
  access,
  events,
  history,
}: {
  access: SiteAccess;
  events: Events;
  /** Records each update in the update history, core with the restore point it takes first (none: not recorded). */
  history?: Pick<SingleSiteRecording, 'core' | 'translations'>;
}) {
  function logFailure(
    site: ConnectedSite,
    fields: { fromVersion: string | null; toVersion: string | null },
    error: unknown,
  ) {
    // Nothing to update is an answer, not a failed update.
    if (isProblem(error, wordpressUpdatesProblems.noUpdate, wordpressUpdatesProblems.versionNotOffered)) return;
    events.emit('core.update_failed', {
      siteId: site.site.id,
      url: site.site.url,
      ...fields,
      reason: isAppError(error) ? error.problem.name : 'internal-error',
      message: error instanceof Error ? error.message : String(error),
    });
  }

  /** To `version` when given (it must be one WordPress offers the site), else to the newest offered; not recorded. */
  function applyCore(siteId: string, options: { version?: string } = {}): Promise<CoreUpdate> {
    return access.operate(siteId, async (site) => {
      // Only for the failure event: what the site ran before, when it says.
      const fromVersion = (await site.connector.info().catch(() => null))?.wordpress ?? null;
      try {
        const updated = await site.connector.updateCore(options.version).catch(rethrowCoreOperation);
        events.emit('core.updated', {
          siteId: site.site.id,
          url: site.site.url,
          fromVersion: updated.previousVersion,
          toVersion: updated.version,
          databaseUpgraded: updated.databaseUpgraded,
        });
        return {
          previousVersion: updated.previousVersion,
          version: updated.version,
          databaseUpgraded: updated.databaseUpgraded,
          rollback: NOT_RECORDED_ROLLBACK,
        };
      } catch (error) {
        logFailure(site, { fromVersion, toVersion: options.version ?? null }, error);
        throw error;
      }
    });
  }

  /**
   * Every language pack WordPress offers the site. Packs that failed are listed in `failed`
   * (and logged); when none was installed the whole update fails. Not recorded.
   */
  function applyTranslations(siteId: string): Promise<TranslationsUpdate> {
    return access.operate(siteId, async (site) => {
      const failed = (reason: string, message: string) =>
        events.emit('translations.update_failed', { siteId: site.site.id, url: site.site.url, reason, message });
      let answer;
      try {
        answer = await site.connector.updateTranslations().catch((error: unknown) => rethrowSiteOperation(error));
      } catch (error) {
        if (!isProblem(error, wordpressUpdatesProblems.noUpdate))
          failed(
            isAppError(error) ? error.problem.name : 'internal-error',
            error instanceof Error ? error.message : String(error),
          );
        throw error;
      }
      const result: TranslationsUpdate = {
        updated: answer.updated.map(({ type, slug, language, version }) => ({ type, slug, language, version })),
        failed: answer.failed.map(({ type, slug, language, message }) => ({ type, slug, language, message })),
      };
      const described = result.failed.map((item) => `${item.type} ${item.slug} ${item.language}: ${item.message}`);
      if (result.failed.length > 0) failed(wordpressUpdatesProblems.operationFailed.name, described.join('; '));
      if (result.updated.length === 0 && result.failed.length > 0)
        throw wordpressUpdatesProblems.operationFailed.create(`no translation was installed: ${described.join('; ')}`);
      events.emit('translations.updated', {
        siteId: site.site.id,
        url: site.site.url,
        updated: result.updated.length,
        failed: result.failed.length,
      });
      return result;
    });
  }

  return {
    /** To `version` when given (one WordPress offers the site), else to the newest offered; recorded in the update history (who asked: `requestedBy`). */
    updateCore: (siteId: string, options: { version?: string } & RequestedBy = {}): Promise<CoreUpdate> =>
      history ? history.core(siteId, options, () => applyCore(siteId, options)) : applyCore(siteId, options),

    /** Every language pack WordPress offers the site, recorded in the update history. */
    updateTranslations: (siteId: string, options: RequestedBy = {}): Promise<TranslationsUpdate> =>
      history ? history.translations(siteId, options, () => applyTranslations(siteId)) : applyTranslations(siteId),

    /** `updateCore` and `updateTranslations` not recorded: for a caller that records the attempt itself (a bulk update's site). */
    applyCore,
    applyTranslations,
  };
}

function rethrowCoreOperation(error: unknown): never {
  return rethrowSiteOperation(error, {
    sitewarden_core_version_not_offered: (error) =>
      wordpressUpdatesProblems.versionNotOffered.create(error.detail, error.extensions),
  });
}

export type WordPressUpdatesService = ReturnType<typeof createWordPressUpdatesService>;
