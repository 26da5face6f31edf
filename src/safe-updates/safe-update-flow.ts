import { isAppError } from '../shared/errors.js';
import type { ConnectedSite } from '../wordpress/site-access.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import type { StandaloneRollback } from '../wordpress/rollback-client.js';
import { createRestorePoints } from '../wordpress/rollback-client.js';
import { checkSiteHealth, describeFailures, firstProblem } from './health-check.js';
import {
  storedPolicy,
  storedReport,
  type HealthReport,
  type ItemState,
  type SafeUpdatePolicy,
  type SafeUpdateReport,
  type Step,
} from './safe-updates.schemas.js';
import type { SafeUpdatePhase, SafeUpdateRow, SafeUpdateStatus } from './safe-updates.table.js';

export type { ItemState } from './safe-updates.schemas.js';

export interface FlowOutcome {
  status: Exclude<SafeUpdateStatus, 'queued' | 'running'>;
  reason: string | null;
  message: string | null;
}

/** What the flow writes as it goes; every write lands before the next step starts (crash safety). */
export interface FlowRecorder {
  row(): SafeUpdateRow;
  phase(phase: SafeUpdatePhase, changes?: Partial<SafeUpdateRow>): Promise<void>;
  report(change: (report: SafeUpdateReport) => void): Promise<void>;
}

export interface FlowDeps {
  http: SiteHttp;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  operationTimeoutMs: number;
}

const ACTIVE_STATUSES = new Set(['active', 'network-active']);
/** Problems of an update refused before it changed anything: nothing to check or roll back. */
const NOTHING_CHANGED = new Set(['no-update-available', 'core-version-not-offered']);

/** The item as WordPress reports it now (null when it is not installed or WordPress cannot answer). */
export async function readItem(
  site: ConnectedSite,
  type: 'plugin' | 'theme' | 'core',
  slug: string,
): Promise<ItemState | null> {
  if (type === 'core') {
    const info = await site.connector.info();
    return info ? { target: 'core', version: info.wordpress, active: true } : null;
  }
  if (type === 'plugin') {
    const plugin = (await site.session.listPlugins()).find((candidate) => {
      const [folder, file] = candidate.plugin.includes('/') ? candidate.plugin.split('/', 2) : [null, candidate.plugin];
      return (folder ?? file) === slug;
    });
    return plugin
      ? { target: `${plugin.plugin}.php`, version: plugin.version, active: ACTIVE_STATUSES.has(plugin.status) }
      : null;
  }
  const theme = (await site.session.listThemes()).find((candidate) => candidate.stylesheet === slug);
  return theme ? { target: theme.stylesheet, version: theme.version, active: theme.status === 'active' } : null;
}

/** The policy's after-checks: a settle time, then up to `attempts` rounds until one is healthy. */
export async function checkUntilHealthy(
  deps: FlowDeps,
  site: ConnectedSite,
  policy: SafeUpdatePolicy,
): Promise<HealthReport[]> {
  await deps.sleep(policy.settleMs);
  const reports: HealthReport[] = [];
  for (let attempt = 1; attempt <= policy.attempts; attempt++) {
    if (attempt > 1) await deps.sleep(policy.retryDelayMs);
    const report = await checkSiteHealth({ http: deps.http, site, now: deps.now }, policy, attempt);
    reports.push(report);
    if (report.healthy) break;
  }
  return reports;
}

const last = <T>(items: T[]): T => items[items.length - 1]!;

/**
 * From the update on: the update itself (unless resuming), the after-checks, and the decision to
 * keep it or put the previous version back through the standalone path. Safe to run again from
 * any of its phases after a crash: the restore is idempotent and the checks only read.
 */
export async function updateCheckDecide(
  deps: FlowDeps,
  site: ConnectedSite,
  standalone: StandaloneRollback,
  record: FlowRecorder,
  update: (() => Promise<void>) | null,
  visual: { after(): Promise<{ reason: string; message: string } | null>; evidence(): Promise<void> },
): Promise<FlowOutcome> {
  const row = record.row();
  const policy = storedPolicy(row);
  const step = (name: string, ok: boolean, startedAt: number, detail?: string) =>
    record.report((report) => {
      const entry: Step = {
        step: name,
        ok,
        at: new Date(startedAt).toISOString(),
        durationMs: Date.now() - startedAt,
        ...(detail ? { detail } : {}),
      };
      report.steps = [...(report.steps ?? []), entry];
    });
  const item = storedReport(row).item;

  let updateFailure: string | null = null;
  if (update) {
    await record.phase('updating');
    const started = Date.now();
    try {
      await update();
      await step('update', true, started);
    } catch (error) {
      updateFailure = isAppError(error) ? `${error.problem.name}: ${error.detail}` : String(error);
      await step('update', false, started, updateFailure);
      // Refused before anything changed (core: nothing or not that version on offer).
      if (isAppError(error) && NOTHING_CHANGED.has(error.problem.name))
        return { status: 'failed', reason: error.problem.name, message: error.detail };
    }
  }

  await record.phase('after-check');
  const after = await checkUntilHealthy(deps, site, policy);
  await record.report((report) => (report.after = after));

  let reason: string | null = null;
  let message: string | null = null;
  if (!last(after).healthy) {
    reason = firstProblem(last(after));
    message = describeFailures(last(after));
  } else if (updateFailure) {
    reason = 'update-failed';
    message = updateFailure;
  } else if (item) {
    // undefined: WordPress did not answer. null: it answered without the item.
    const now = await readItem(site, row.itemType, row.slug).catch(() => undefined);
    if (now === undefined) {
      // A site can break on a later request than the check's (a plugin that writes its fatal
      // error on first load): check again, so the report names the site's problem, not a lost item.
      const again = await checkUntilHealthy(deps, site, policy);
      await record.report((report) => (report.after = [...after, ...again]));
      [reason, message] = last(again).healthy
        ? ['item-unreadable', `WordPress did not answer when asked for ${row.slug} after the update`]
        : [firstProblem(last(again)), describeFailures(last(again))];
    } else if (!now) [reason, message] = ['item-missing', `${row.slug} is no longer listed by WordPress`];
    else if (item.active && !now.active)
      [reason, message] = ['deactivated', `${row.slug} was active before the update and is not now`];
    else await record.phase('after-check', { toVersion: now.version });
  }
  if (reason === null) {
    const looks = await visual.after();
    if (looks) [reason, message] = [looks.reason, looks.message];
  }
  if (reason === null) return { status: 'kept', reason: null, message: null };
  // The broken pages as they are before the rollback: the report's evidence (a visual change has them already).
  if (reason !== 'visual-change') await visual.evidence();

  await record.phase('rolling-back', { reason, message });
  const rolledBack = await rollBack(deps, site, standalone, record, item, step);
  if (!rolledBack.ok) return { status: 'rollback-failed', reason, message: `${message}; ${rolledBack.detail}` };
  const checks = await checkUntilHealthy(deps, site, policy);
  await record.report((report) => (report.afterRollback = checks));
  if (!last(checks).healthy)
    return {
      status: 'rollback-failed',
      reason,
      message: `${message}; still unhealthy after the rollback: ${describeFailures(last(checks))}`,
    };
  return { status: 'rolled-back', reason, message };
}

/** Puts the saved copy back without WordPress, then (WordPress answering again) its activation. */
async function rollBack(
  deps: FlowDeps,
  site: ConnectedSite,
  standalone: StandaloneRollback,
  record: FlowRecorder,
  item: ItemState | undefined,
  step: (name: string, ok: boolean, startedAt: number, detail?: string) => Promise<void>,
): Promise<{ ok: boolean; detail?: string }> {
  const row = record.row();
  const started = Date.now();
  if (!row.restorePointId || !row.restorePointTarget) {
    await step('rollback', false, started, 'no restore point was taken');
    return { ok: false, detail: 'no restore point was taken' };
  }
  const answer = await standalone
    .restore(row.restorePointId, row.restorePointTarget)
    .catch((error: unknown) => ({ status: 0, code: isAppError(error) ? error.problem.name : String(error) }));
  if (answer.status !== 200) {
    const detail = `the standalone rollback path answered ${answer.status}${answer.code ? ` (${answer.code})` : ''}`;
    await step('rollback', false, started, detail);
    return { ok: false, detail };
  }
  await step('rollback', true, started, `${row.restorePointTarget} put back from restore point ${row.restorePointId}`);

  // A plugin whose update failed halfway can be left inactive: activate the old version again.
  if (row.itemType === 'plugin' && item?.active) {
    const activated = Date.now();
    await deps.sleep(250);
    const now = await readItem(site, 'plugin', row.slug).catch(() => null);
    if (now && !now.active) {
      const done = await site.connector
        .changePluginStatus('activate', now.target)
        .then(() => true)
        .catch(() => false);
      await step('reactivate', done, activated, `${now.target} ${now.version}`);
    }
  }
  return { ok: true };
}

/** The connector's restore point for the item, before the update. */
export async function takeRestorePoint(
  deps: Pick<FlowDeps, 'operationTimeoutMs'>,
  site: ConnectedSite,
  type: 'plugin' | 'theme' | 'core',
  target: string,
): Promise<{ id: string; target: string; bytes: number }> {
  return createRestorePoints(site.session, { timeoutMs: deps.operationTimeoutMs }).save(type, target);
}
