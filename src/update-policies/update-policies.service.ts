import type { Logger } from 'pino';
import type { SiteUpdateState, UpdateStateReader } from '../inventory/index.js';
import { sitesProblems, type SitesRepository } from '../sites/index.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { createId } from '../shared/ids.js';
import { windowsAt, type WindowSpan } from './maintenance-window.js';
import {
  evaluateSite,
  policyResolver,
  previewSite,
  zoneFor,
  type SitePlan,
  type UpdateTarget,
} from './policy-evaluation.js';
import { updatePoliciesProblems } from './update-policies.errors.js';
import { createUpdateHolds } from './update-holds.js';
import type { StoredPolicy, UpdatePoliciesRepository } from './update-policies.repository.js';
import type { CreatePolicyInput, UpdatePolicyInput } from './update-policies.schemas.js';
import type { z } from '@hono/zod-openapi';
import { UnattendedChecksSchema, type SafeUpdatePolicy } from '../shared/safe-update-checks.js';

/** A policy as given: `checks` may be left out (the unattended defaults: rolled back on a visual change). */
type WithDefaultChecks<T extends { checks: unknown }> = Omit<T, 'checks'> & { checks?: T['checks'] };
const defaultChecks = () => UnattendedChecksSchema.parse({});

/**
 * Bulk updates' entry point (src/bulk-updates, `startBulkUpdate`), as the composition passes it:
 * one job for all targets, children not started by `notAfter` end skipped. Null when the run
 * could only be planned (no bulk-update runner is wired).
 */
export type ApplyUpdates = (request: {
  targets: UpdateTarget[];
  trigger: { kind: 'request' | 'policy'; id: string };
  dryRun?: boolean;
  safe?: boolean;
  /** The checks of the run's safe updates (the policy's `checks`). */
  checks?: Partial<SafeUpdatePolicy>;
  notAfter?: Date;
}) => Promise<{ id: string } | null> | { id: string } | null;

const TAGS_CHUNK = 500;

/**
 * Update policies: stored per site or tag, evaluated against the inventory (less the versions held
 * on a site after a rollback), started by the minute tick.
 */
export function createUpdatePoliciesService({
  repository,
  states,
  sites,
  applyUpdates,
  clock,
  events,
  logger,
}: {
  repository: UpdatePoliciesRepository;
  states: UpdateStateReader;
  sites: Pick<SitesRepository, 'connectedIds' | 'tagsOf' | 'findById' | 'statesOf'>;
  applyUpdates: ApplyUpdates;
  clock: Clock;
  events: Events;
  logger: Logger;
}) {
  const holds = createUpdateHolds({ repository: repository.holds, clock, events, logger });

  async function get(id: string): Promise<StoredPolicy> {
    const policy = await repository.find(id);
    if (!policy) throw updatePoliciesProblems.notFound.create(`no update policy has the id ${id}`);
    return policy;
  }

  /** Every connected site with its tags and the policy that governs it (if any). */
  async function governedSites(policies: StoredPolicy[]): Promise<{ siteId: string; policy: StoredPolicy }[]> {
    const ids = await sites.connectedIds();
    const governingPolicy = policyResolver(policies);
    const governed: { siteId: string; policy: StoredPolicy }[] = [];
    for (let i = 0; i < ids.length; i += TAGS_CHUNK) {
      for (const [siteId, tags] of await sites.tagsOf(ids.slice(i, i + TAGS_CHUNK))) {
        const policy = governingPolicy({ siteId, tags });
        if (policy) governed.push({ siteId, policy });
      }
    }
    return governed;
  }

  /** Starts one bulk update for the plans' sites not yet started in this window; answers how many it started. */
  async function startRun(policy: StoredPolicy, window: WindowSpan, plans: SitePlan[]): Promise<number> {
    const claimed = new Set(
      await repository.claim(
        policy.id,
        window,
        plans.map((plan) => ({ siteId: plan.siteId, targets: plan.updates.length })),
        clock.now(),
      ),
    );
    if (claimed.size === 0) return 0;
    const targets = plans.filter((plan) => claimed.has(plan.siteId)).flatMap((plan) => plan.updates);
    let job: { id: string } | null;
    try {
      job = await applyUpdates({
        targets,
        trigger: { kind: 'policy', id: policy.id },
        safe: policy.settings.safe,
        checks: policy.settings.checks,
        notAfter: window.end,
      });
    } catch (error) {
      // Nothing started: the window is given back and the next tick tries again while it is open.
      await repository.release(policy.id, window.start, [...claimed]);
      logger.error({ err: error, policyId: policy.id }, 'starting an update policy run failed');
      return 0;
    }
    if (job) await repository.recordJob(policy.id, window.start, [...claimed], job.id);
    events.emit('update_policy.run_started', {
      policyId: policy.id,
      jobId: job?.id ?? null,
      sites: claimed.size,
      targets: targets.length,
      windowStart: window.start.toISOString(),
      windowEnd: window.end.toISOString(),
    });
    return claimed.size;
  }

  return {
    list: () => repository.list(),
    get,
    /** Versions rolled back on a site, which policies skip there: fed by `holds.onEvent`, listed, released. */
    holds,

    async create(input: WithDefaultChecks<z.output<typeof CreatePolicyInput>>): Promise<StoredPolicy> {
      const { name, siteId, tag, priority, checks = defaultChecks(), ...rest } = input;
      const settings = { ...rest, checks };
      if ((siteId === undefined) === (tag === undefined))
        throw updatePoliciesProblems.scope.create('give `siteId` or `tag`, and only one');
      if (siteId !== undefined && !(await sites.findById(siteId)))
        throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
      const now = clock.now();
      const policy: StoredPolicy = {
        id: createId('upol', now),
        name,
        siteId: siteId ?? null,
        tag: tag ?? null,
        priority,
        settings,
        createdAt: now,
        updatedAt: now,
      };
      // The site's or tag's unique index decides: of two requests at once, one writes its policy.
      if (!(await repository.insert(policy)))
        throw updatePoliciesProblems.exists.create(
          siteId !== undefined ? `site ${siteId} already has a policy` : `tag ${tag} already has a policy`,
        );
      return policy;
    },

    async replace(id: string, input: WithDefaultChecks<z.output<typeof UpdatePolicyInput>>): Promise<StoredPolicy> {
      const { name, priority, checks = defaultChecks(), ...rest } = input;
      const settings = { ...rest, checks };
      const replaced = await repository.replace(id, { name, priority, settings, updatedAt: clock.now() });
      if (!replaced) throw updatePoliciesProblems.notFound.create(`no update policy has the id ${id}`);
      return replaced;
    },

    async remove(id: string): Promise<void> {
      if (!(await repository.remove(id)))
        throw updatePoliciesProblems.notFound.create(`no update policy has the id ${id}`);
    },

    /**
     * The dry run: for each site the policy governs (a page of them, by id), what it would apply
     * in the window open now or else in the next one.
     */
    async preview(id: string, page: { limit: number; after?: string }) {
      const policy = await get(id);
      const now = clock.now();
      const siteIds = (await governedSites(await repository.list()))
        .filter((site) => site.policy.id === policy.id && (!page.after || site.siteId > page.after))
        .map((site) => site.siteId)
        .slice(0, page.limit + 1);
      const held = await holds.activeFor(siteIds);
      const found = await sites.statesOf(siteIds);
      const plans = await Promise.all(
        (await states.updateStates(siteIds)).map(async (state) => {
          const plan = previewSite(policy, state, now, held.get(state.siteId));
          return {
            ...plan,
            url: found.get(state.siteId)?.url ?? '',
            alreadyRun: await repository.hasRun(policy.id, state.siteId, plan.window.start),
          };
        }),
      );
      return { policy, at: now, plans };
    },

    /** One site's dry run: the policy that governs it (null: none) and what it would do in its window. */
    async previewSite(siteId: string) {
      const site = await sites.findById(siteId);
      if (!site) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
      const now = clock.now();
      const tags = (await sites.tagsOf([siteId])).get(siteId) ?? [];
      const policy = policyResolver(await repository.list())({ siteId, tags });
      const [state] = await states.updateStates([siteId]);
      if (!policy || !state) return { at: now, policy: null, plan: null };
      const plan = previewSite(policy, state, now, (await holds.activeFor([siteId])).get(siteId));
      return {
        at: now,
        policy,
        plan: { ...plan, url: site.url, alreadyRun: await repository.hasRun(policy.id, siteId, plan.window.start) },
      };
    },

    /**
     * The minute tick: for each site whose policy's window is open now, has not started a run in
     * this window, and has updates due, start one bulk update per policy and window end, with
     * `notAfter` the window's end. Windows are computed once per policy and time zone.
     */
    async tick(): Promise<number> {
      const policies = await repository.list();
      if (!policies.some((policy) => policy.settings.enabled)) return 0;
      const now = clock.now();
      const zones = await states.timeZones();
      const windows = new Map<string, WindowSpan | null>();
      const alreadyRun = new Map<string, Set<string>>();
      const candidates: { siteId: string; policy: StoredPolicy; window: WindowSpan }[] = [];
      for (const { siteId, policy } of await governedSites(policies)) {
        if (!policy.settings.enabled) continue;
        const { zone } = zoneFor(policy.settings, zones.get(siteId) ?? null);
        const key = `${policy.id}\t${zone.name}`;
        if (!windows.has(key)) windows.set(key, windowsAt(policy.settings.window, zone, now).open);
        const window = windows.get(key);
        if (!window) continue;
        const runKey = `${policy.id}\t${window.start.getTime()}`;
        if (!alreadyRun.has(runKey)) alreadyRun.set(runKey, await repository.sitesRun(policy.id, window.start));
        if (!alreadyRun.get(runKey)!.has(siteId)) candidates.push({ siteId, policy, window });
      }
      if (candidates.length === 0) return 0;
      const stateOf = new Map<string, SiteUpdateState>(
        (await states.updateStates(candidates.map((c) => c.siteId))).map((state) => [state.siteId, state]),
      );
      const held = await holds.activeFor([...stateOf.keys()]);
      const runs = new Map<string, { policy: StoredPolicy; window: WindowSpan; plans: SitePlan[] }>();
      for (const { siteId, policy, window } of candidates) {
        const state = stateOf.get(siteId);
        if (!state) continue;
        const plan = evaluateSite(policy, state, now, held.get(siteId));
        if (plan.updates.length === 0) continue;
        const key = `${policy.id}\t${window.start.getTime()}\t${window.end.getTime()}`;
        const run = runs.get(key) ?? { policy, window, plans: [] };
        run.plans.push(plan);
        runs.set(key, run);
      }
      let started = 0;
      for (const run of runs.values()) {
        started += await startRun(run.policy, run.window, run.plans);
      }
      return started;
    },
  };
}

export type UpdatePoliciesService = ReturnType<typeof createUpdatePoliciesService>;
