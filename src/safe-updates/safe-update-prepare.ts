// Before a safe update changes anything: what is installed and what is offered, the rollback path,
// the before-checks and screenshots, then the connector's restore point. A refusal here leaves the
// site untouched.
import type { AvailableUpdates } from '../wordpress/connector-client.js';
import type { StandaloneRollback } from '../wordpress/rollback-client.js';
import type { ConnectedSite } from '../wordpress/site-access.js';
import { checkSiteHealth, describeFailures } from './health-check.js';
import type { RollbackPaths } from './rollback-path.js';
import { addStep } from './safe-update-record.js';
import { readItem, takeRestorePoint, type FlowDeps, type FlowOutcome, type FlowRecorder } from './safe-update-flow.js';
import { storedPolicy } from './safe-updates.schemas.js';
import { createVisualCheck, type ScreenshotStore } from './visual-check.js';

/** The reason of a safe update refused because the site already failed its before-checks: not the update's fault. */
const SITE_DOWN_BEFORE_UPDATE = 'site-down-before-update';

/** Before the update: what is there, the rollback path, the before-checks, the restore point. */
export async function prepare(
  deps: { flowDeps: FlowDeps; rollbackPath: RollbackPaths['rollbackPath']; screenshots: ScreenshotStore },
  site: ConnectedSite,
  record: FlowRecorder,
  signal: AbortSignal,
): Promise<{ refused: FlowOutcome } | { standalone: StandaloneRollback }> {
  const { flowDeps } = deps;
  const row = record.row();
  const policy = storedPolicy(row);
  const failed = (reason: string, message: string) => ({
    refused: { status: 'failed', reason, message } satisfies FlowOutcome,
  });

  const item = await readItem(site, row.itemType, row.slug);
  if (!item) return failed(`${row.itemType}-not-found`, `${site.site.url} has no ${row.itemType} ${row.slug}`);
  const offerIn = (offers: AvailableUpdates) =>
    row.itemType === 'plugin' ? offers.plugins[item.target]?.newVersion : offers.themes[item.target]?.newVersion;
  // WordPress's last update check first; the update servers only when it knows of nothing. Core:
  // the connector's core/update checks the offer itself (no-update-available, core-version-not-offered).
  const offer =
    row.itemType === 'core'
      ? row.toVersion
      : (offerIn(await site.connector.updates({ refresh: false })) ??
        offerIn(await site.connector.updates({ refresh: true })));
  if (!offer && row.itemType !== 'core')
    return failed('no-update-available', `${row.slug} is at ${item.version} and no newer version is offered`);
  if (row.toVersion && offer && row.toVersion !== offer)
    return failed('version-not-offered', `${row.slug} ${row.toVersion} was asked for; the site offers ${offer}`);
  await record.phase('before-check', { fromVersion: item.version, toVersion: offer });
  await record.report((report) => (report.item = item));

  const standalone = await deps.rollbackPath(site);
  const before = await checkSiteHealth({ http: flowDeps.http, site, now: flowDeps.now }, policy);
  await record.report((report) => (report.before = [before]));
  if (!before.healthy)
    return failed(
      SITE_DOWN_BEFORE_UPDATE,
      `the site was already down before the update (its checks failed before anything was changed), so nothing was updated: ${describeFailures(before)}`,
    );
  await createVisualCheck(deps.screenshots, record, site.site.url).before();
  if (signal.aborted) return failed('interrupted', 'the daemon stopped before the update');

  await record.phase('restore-point');
  const started = Date.now();
  const point = await takeRestorePoint(flowDeps, site, row.itemType, item.target);
  await record.phase('restore-point', { restorePointId: point.id, restorePointTarget: point.target });
  await addStep(record, 'restore-point', true, started, `${point.target} saved as ${point.id} (${point.bytes} bytes)`);
  return { standalone };
}
