import { jobView } from '../jobs/jobs.schemas.js';
import type { JobRow } from '../jobs/jobs.table.js';
import type { BulkUpdateRun } from './bulk-updates.schemas.js';
import type { ItemOutcome, PlannedItem } from './site-updater.js';
import type { TriggerKind } from './update-history.table.js';
import type { SafeUpdatePolicy } from '../safe-updates/index.js';

/** What a bulk job's row holds in `params`. */
export interface BulkParams {
  trigger: { kind: TriggerKind; id: string | null };
  dryRun: boolean;
  notAfter: string | null;
  sites: number;
  /** Each plugin, theme and core item as a safe update (checks, restore point, rollback); absent in older rows: false. */
  safe?: boolean;
  /** The checks of those safe updates, as asked (defaults filled in); absent: each safe update's defaults. */
  checks?: SafeUpdatePolicy | null;
}
/** What a site's child job holds in `params`; its `progress` holds `{ items: ItemOutcome[] }` once it ran. */
export interface ChildParams {
  bulkId: string;
  url: string;
  host: string;
  items: PlannedItem[];
}

/** What a preview's (a dry run's) row holds in `progress`: its plan, and once applied, the bulk job it was applied as. */
export interface PreviewProgress {
  plan: { siteId: string; url: string; items: PlannedItem[] }[];
  appliedAs?: string;
}

/** A child left unstarted for one of these reasons is shown `skipped`, not `cancelled`. */
const SKIP_REASONS = new Set(['window-closed', 'site-not-connected', 'interrupted']);

const parsed = <T>(text: string): T => JSON.parse(text) as T;
const iso = (date: Date | null) => date?.toISOString() ?? null;
const pending = (items: PlannedItem[]): ItemOutcome[] =>
  items.map((item) => ({ ...item, state: 'pending', reason: null, message: null }));

type SiteState = BulkUpdateRun['sites'][number]['state'];

/** A site cancelled before its turn: its items were never started, so none reads as still to come. */
const notLeftPending = (state: SiteState, items: ItemOutcome[]): ItemOutcome[] =>
  state !== 'cancelled'
    ? items
    : items.map((item) =>
        item.state === 'pending'
          ? {
              ...item,
              state: 'skipped',
              reason: 'cancelled',
              message: 'the site was cancelled before this item was updated',
            }
          : item,
      );

function siteState(child: Pick<JobRow, 'state' | 'reason' | 'progress'>): SiteState {
  if (child.state === 'cancelled') return child.reason && SKIP_REASONS.has(child.reason) ? 'skipped' : 'cancelled';
  if (child.state === 'succeeded') {
    const items = parsed<{ items?: ItemOutcome[] }>(child.progress).items ?? [];
    // Nothing was left to update on the site (every item skipped): the site is skipped too.
    if (items.length > 0 && items.every((item) => item.state === 'skipped')) return 'skipped';
  }
  return child.state;
}

function of(job: JobRow, children: JobRow[]): BulkUpdateRun {
  const params = parsed<BulkParams>(job.params);
  const counts = { total: 0, done: 0, succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
  if (params.dryRun) {
    const { plan, appliedAs } = parsed<PreviewProgress>(job.progress);
    return {
      job: jobView(job),
      dryRun: true,
      safe: params.safe ?? false,
      checks: params.checks ?? null,
      trigger: params.trigger,
      notAfter: params.notAfter,
      appliedAs: appliedAs ?? null,
      progress: { ...counts, total: plan.length },
      sites: plan.map((site) => ({
        siteId: site.siteId,
        url: site.url,
        jobId: null,
        state: 'queued',
        reason: null,
        message: null,
        startedAt: null,
        finishedAt: null,
        items: pending(site.items),
      })),
    };
  }
  const sites = children.map((child) => {
    const childParams = parsed<ChildParams>(child.params);
    const state = siteState(child);
    counts.total++;
    if (state !== 'queued' && state !== 'running') {
      counts.done++;
      counts[state]++;
    }
    return {
      siteId: child.siteId ?? '',
      url: childParams.url,
      jobId: child.id,
      state,
      reason: child.reason,
      message: child.message,
      startedAt: iso(child.startedAt),
      finishedAt: iso(child.finishedAt),
      items: notLeftPending(
        state,
        parsed<{ items?: ItemOutcome[] }>(child.progress).items ?? pending(childParams.items),
      ),
    };
  });
  return {
    job: jobView(job),
    dryRun: false,
    safe: params.safe ?? false,
    checks: params.checks ?? null,
    trigger: params.trigger,
    notAfter: params.notAfter,
    appliedAs: null,
    progress: counts,
    sites,
  };
}

/** A run in a list (the dashboard's history): no per-site rows, only the counts its row already holds. */
function summary(job: JobRow) {
  const params = parsed<BulkParams>(job.params);
  const progress = parsed<Partial<BulkUpdateRun['progress']> & { plan?: unknown[] }>(job.progress);
  return {
    id: job.id,
    state: job.state,
    dryRun: params.dryRun,
    safe: params.safe ?? false,
    trigger: params.trigger,
    sites: params.sites,
    done: progress.done ?? 0,
    succeeded: progress.succeeded ?? 0,
    failed: progress.failed ?? 0,
    createdAt: job.createdAt,
    finishedAt: job.finishedAt,
  };
}

export const runView = { of, siteState, summary };
