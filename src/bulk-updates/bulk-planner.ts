/**
 * The bulk update planner: what to update where. A request's selection becomes targets, the targets each site's
 * planned items (deduplicated, with the versions from and to), and those the rows a request writes: a preview (a dry
 * run, finished with its plan), or a queued bulk job with a child job per site. It reads; the coordinator writes.
 */
import type { EndedJob, NewChildJob, NewJob } from '../jobs/job-kind.js';
import type { Clock } from '../shared/clock.js';
import { createId } from '../shared/ids.js';
import { sitesProblems } from '../sites/index.js';
import { SafeUpdatePolicySchema, type SafeUpdatePolicy } from '../safe-updates/index.js';
import type { TriggerKind } from '../update-history/index.js';
import { BULK, CHILD, SAFE_CHILD, progressOf } from './bulk-jobs.js';
import type { BulkParams, ChildParams } from './bulk-run-view.js';
import { childId, type BulkUpdatesRepository, type SiteFacts } from './bulk-updates.repository.js';
import type { BulkUpdateInput } from './bulk-updates.schemas.js';
import { resolveSelection, type BulkTarget } from './selection.js';
import type { PlannedItem } from './site-updater.js';
import { hostOf } from './update-slots.js';

export interface BulkUpdateRequest {
  targets: BulkTarget[];
  trigger: { kind: TriggerKind; id: string | null };
  dryRun?: boolean;
  /** Each plugin, theme and core item as a safe update. */
  safe?: boolean;
  /** How those safe updates check the sites and when they roll back (a single safe update's `policy`); none: its defaults. */
  checks?: Partial<SafeUpdatePolicy>;
  /** Sites not started by then end `skipped` (`window-closed`). */
  notAfter?: Date | string;
}

export function createBulkPlanner({ repository, clock }: { repository: BulkUpdatesRepository; clock: Clock }) {
  async function plan(targets: BulkTarget[]): Promise<{ site: SiteFacts; items: PlannedItem[] }[]> {
    const bySite = new Map<string, BulkTarget[]>();
    for (const target of targets) {
      const siteTargets = bySite.get(target.siteId);
      if (siteTargets) siteTargets.push(target);
      else bySite.set(target.siteId, [target]);
    }
    const known = new Map((await repository.sites({ ids: [...bySite.keys()] })).map((site) => [site.id, site]));
    const unknown = [...bySite.keys()].filter((id) => !known.has(id));
    if (unknown.length > 0)
      throw sitesProblems.notFound.create(`there is no site with the id ${unknown.slice(0, 10).join(', ')}`, {
        siteIds: unknown.slice(0, 100),
      });
    // Versions installed, for the plugins and themes whose caller did not give them (a resolved selection does).
    const unread = new Set(
      targets.filter((target) => target.slug !== undefined && target.fromVersion === undefined).map((t) => t.siteId),
    );
    const installed = new Map(
      (unread.size === 0 ? [] : await repository.items([...unread], { pendingOnly: false })).map((row) => [
        `${row.siteId}\t${row.type}\t${row.slug}`,
        row,
      ]),
    );
    return [...bySite.entries()].map(([siteId, siteTargets]) => {
      const site = known.get(siteId)!;
      const seen = new Set<string>();
      const items: PlannedItem[] = [];
      for (const target of siteTargets) {
        const slug = target.type === 'plugin' || target.type === 'theme' ? (target.slug ?? null) : null;
        const key = `${target.type}\t${slug ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const row = slug === null ? undefined : installed.get(`${siteId}\t${target.type}\t${slug}`);
        items.push({
          type: target.type,
          slug,
          fromVersion: target.type === 'core' ? site.wordpressVersion : (target.fromVersion ?? row?.version ?? null),
          toVersion: target.version ?? row?.updateVersion ?? null,
        });
      }
      return { site, items };
    });
  }

  /**
   * The jobs a request writes (the job runner writes them), as they are to be written: a dry run's one job, finished
   * with its plan (a preview: `preview`); otherwise the bulk job, queued, and a child per site, queued (a site not
   * connected: cancelled). `items`: how many items the run updates.
   */
  async function rowsOf({
    targets,
    trigger,
    dryRun = false,
    safe = false,
    checks,
    notAfter,
  }: BulkUpdateRequest): Promise<
    { preview: EndedJob; items: number } | { preview?: undefined; bulk: NewJob; children: NewChildJob[]; items: number }
  > {
    const sitesPlanned = await plan(targets);
    const closesAt = notAfter === undefined ? null : new Date(notAfter).toISOString();
    const now = clock.now();
    const id = createId('bulk', now);
    const params: BulkParams = {
      trigger,
      dryRun,
      safe,
      ...(checks ? { checks: SafeUpdatePolicySchema.parse(checks) } : {}),
      notAfter: closesAt,
      sites: sitesPlanned.length,
    };
    const items = sitesPlanned.reduce((sum, site) => sum + site.items.length, 0);
    if (dryRun) {
      const planned = sitesPlanned.map(({ site, items }) => ({ siteId: site.id, url: site.url, items }));
      const preview: EndedJob = {
        id,
        kind: BULK,
        siteId: null,
        state: 'succeeded',
        params,
        progress: { plan: planned },
        attempts: 0,
        createdAt: now,
        startedAt: null,
        finishedAt: now,
      };
      return { preview, items };
    }
    const children = sitesPlanned.map(({ site, items }, index): NewChildJob => {
      const params: ChildParams = { bulkId: id, url: site.url, host: hostOf(site.url), items };
      const child = {
        id: childId(id, index),
        kind: safe ? SAFE_CHILD : CHILD,
        siteId: site.id,
        params,
        createdAt: now,
      };
      if (site.state === 'connected') return child;
      const ended = { state: 'cancelled', reason: 'site-not-connected', message: `the site is ${site.state}` } as const;
      return { ...child, ended: { ...ended, finishedAt: now } };
    });
    const counted = children.map(({ ended }) => ({
      state: ended?.state ?? ('queued' as const),
      reason: ended?.reason ?? null,
      progress: '{}',
    }));
    const bulk: NewJob = { id, kind: BULK, siteId: null, params, progress: progressOf(counted), createdAt: now };
    return { bulk, children, items };
  }

  return {
    /** The targets a request's selection names, from the inventory rows. */
    select: (input: BulkUpdateInput): Promise<BulkTarget[]> => resolveSelection(repository, input),
    rowsOf,
  };
}

export type BulkPlanner = ReturnType<typeof createBulkPlanner>;
