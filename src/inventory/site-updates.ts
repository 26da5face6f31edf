import { defineProblem, isAppError, isProblem, type AppError, type Problem } from '../shared/errors.js';
import type { Events } from '../shared/event-bus.js';
import type { ConnectedSite } from '../wordpress/site-access.js';
import { wordpressProblems } from '../wordpress/wordpress.errors.js';

/** Problems of changing what is installed on a site, shared by plugins and themes. */
export const updateProblems = {
  noUpdate: defineProblem('no-update-available', 409, 'No newer version is known'),
  /** A core update asked for a version WordPress does not offer the site (wordpress-updates; the update history skips it). */
  versionNotOffered: defineProblem(
    'core-version-not-offered',
    409,
    'WordPress does not offer that version to the site',
  ),
  operationFailed: defineProblem('site-operation-failed', 502, 'The site could not carry out the operation'),
  /**
   * The new version is on the site's disk, but the site failed after it (WordPress answered an
   * error, or the update's own request did): the update history records it applied, the site
   * unhealthy; extensions `slug`, `fromVersion`, `version` (on disk), `siteProblem` (what failed).
   */
  appliedSiteUnhealthy: defineProblem(
    'update-applied-site-unhealthy',
    502,
    'The update was applied, but the site failed after it',
  ),
};

/**
 * Whether a failed update may still have changed the site's files: the site failed or could not
 * be reached (5xx problems, anything unexpected), not a refusal before anything changed (4xx).
 */
export const mayHaveChangedFiles = (error: unknown): boolean => !isAppError(error) || error.problem.status >= 500;

/**
 * The problem of an update the site's disk shows done while the site failed after it (`error`):
 * `version` is what is on disk now.
 */
export function appliedButUnhealthy(
  item: { slug: string; fromVersion: string | null },
  version: string,
  error: unknown,
): AppError {
  if (isProblem(error, updateProblems.appliedSiteUnhealthy)) return error;
  const what = isAppError(error) ? `${error.problem.name}: ${error.detail}` : String(error);
  return updateProblems.appliedSiteUnhealthy.create(
    `${item.slug} ${version} is on the site now${item.fromVersion ? ` (it was ${item.fromVersion})` : ''}, but the site failed after the update: ${what}`,
    {
      slug: item.slug,
      fromVersion: item.fromVersion,
      version,
      siteProblem: isAppError(error) ? error.problem.name : 'internal-error',
    },
    { cause: error },
  );
}

type ProblemFor = (error: AppError) => AppError;

const COMMON_CODES: Record<string, ProblemFor> = {
  sitewarden_no_update: (error) => updateProblems.noUpdate.create(error.detail, error.extensions),
  sitewarden_filesystem_unavailable: (error) =>
    wordpressProblems.siteForbidden.create(`the site cannot write its files: ${error.detail}`, error.extensions),
  sitewarden_update_failed: (error) => updateProblems.operationFailed.create(error.detail, error.extensions),
  sitewarden_delete_failed: (error) => updateProblems.operationFailed.create(error.detail, error.extensions),
};

/** Maps WordPress's and the connector's error codes to Sitewarden's problems: the feature's own codes, then the common ones. */
export function rethrowSiteOperation(error: unknown, featureCodes: Record<string, ProblemFor> = {}): never {
  if (!isAppError(error)) throw error;
  const code = String(error.extensions.siteCode ?? '');
  const problemFor = featureCodes[code] ?? COMMON_CODES[code];
  throw problemFor ? problemFor(error) : error;
}

/**
 * Logs `plugin.update_failed` / `theme.update_failed` for an update the site did not carry out
 * (it refused, could not write its files, failed, or could not be reached); `reason` is the
 * problem name the API answers. `nothingToUpdate` are not failures of an update: there was
 * nothing to update.
 */
export function logUpdateFailure(
  events: Events,
  kind: 'plugin' | 'theme',
  site: ConnectedSite,
  item: { slug: string; version: string | null; update: { version: string } | null },
  error: unknown,
  nothingToUpdate: Problem[],
): void {
  if (isProblem(error, ...nothingToUpdate)) return;
  const fields = {
    siteId: site.site.id,
    url: site.site.url,
    slug: item.slug,
    fromVersion: item.version,
    toVersion: item.update?.version ?? null,
    reason: isAppError(error) ? error.problem.name : 'internal-error',
    message: error instanceof Error ? error.message : String(error),
  };
  if (kind === 'plugin') events.emit('plugin.update_failed', fields);
  else events.emit('theme.update_failed', fields);
}
