import { isAppError } from '../shared/errors.js';
import type { ConnectedSite } from '../sites/site-access.js';
import type { Events } from '../shared/event-bus.js';

/** Not failures of an update: there was nothing to update. */
const NOTHING_TO_UPDATE = new Set(['no-update-available', 'plugin-not-found', 'theme-not-found']);

/**
 * Logs `plugin.update_failed` / `theme.update_failed` for an update the site did not carry out
 * (it refused, could not write its files, failed, or could not be reached); `reason` is the
 * problem name the API answers.
 */
export function logUpdateFailure(
  events: Events,
  kind: 'plugin' | 'theme',
  site: ConnectedSite,
  item: { slug: string; version: string | null; update: { version: string } | null },
  error: unknown,
): void {
  const reason = isAppError(error) ? error.problem.name : 'internal-error';
  if (NOTHING_TO_UPDATE.has(reason)) return;
  const fields = {
    siteId: site.site.id,
    url: site.site.url,
    slug: item.slug,
    fromVersion: item.version,
    toVersion: item.update?.version ?? null,
    reason,
    message: error instanceof Error ? error.message : String(error),
  };
  if (kind === 'plugin') events.emit('plugin.update_failed', fields);
  else events.emit('theme.update_failed', fields);
}
