import type { NewJob } from '../jobs/job-kind.js';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { createId } from '../shared/ids.js';
import { sitesProblems, type SitesRepository } from '../sites/index.js';
import type { FleetRepository } from '../fleet/index.js';
import { fleetActionsProblems } from './fleet-actions.errors.js';
import type { FleetActionName, FleetActionRequest, FleetActionSite } from './fleet-actions.schemas.js';
import { FLEET_ACTION, type ActionParams, type ActionProgress } from './fleet-actions.stored.js';

const MAX_SITES = 10_000;

/** Which action a kind of item supports: a theme is not deactivated (another one is activated instead). */
const supported = (type: 'plugin' | 'theme', action: FleetActionName) => type === 'plugin' || action !== 'deactivate';

/** A fleet action as it is queued: what was asked, by whom, and each selected site's result so far. */
export interface PlannedAction extends NewJob {
  params: ActionParams;
  progress: ActionProgress;
}

/**
 * A fleet action's request checked and planned: the sites it selects (a problem when it selects
 * none, too many, or in more than one way), each `queued`, or `skipped` when it is not connected.
 */
export function createFleetActionPlanner({
  sites,
  fleet,
  clock,
}: {
  sites: Pick<SitesRepository, 'statesOf' | 'connectedIds'>;
  fleet: Pick<FleetRepository, 'sitesWith'>;
  clock: Clock;
}) {
  /** The site ids a request selects, in id order. */
  async function select(input: FleetActionRequest): Promise<string[]> {
    const ways = [input.sites !== undefined, input.tag.length > 0, input.all === true].filter(Boolean).length;
    if (ways !== 1) throw fleetActionsProblems.selection.create('give `sites`, `tag` or `all: true`, and only one');
    if (input.sites) {
      const ids = [...new Set(input.sites)].sort();
      const found = await sites.statesOf(ids);
      const unknown = ids.filter((id) => !found.has(id));
      if (unknown.length > 0)
        throw sitesProblems.notFound.create(`there is no site with the id ${unknown.slice(0, 10).join(', ')}`, {
          siteIds: unknown.slice(0, 100),
        });
      return ids;
    }
    const connected = await sites.connectedIds(input.all ? {} : { tag: input.tag });
    if (input.action === 'install') return connected;
    // Any other action: the sites whose last sync lists the item.
    const having = new Set(
      (await fleet.sitesWith({ type: input.type, slug: input.slug, tags: [], limit: MAX_SITES * 10 })).map(
        (row) => row.siteId,
      ),
    );
    return connected.filter((id) => having.has(id));
  }

  return async function plan(input: FleetActionRequest, requestedBy: Actor | null): Promise<PlannedAction> {
    if (!supported(input.type, input.action))
      throw fleetActionsProblems.unsupported.create('a theme is not deactivated: activate another theme instead', {
        action: input.action,
        itemType: input.type,
      });
    const ids = await select(input);
    if (ids.length === 0)
      throw fleetActionsProblems.noSites.create(
        input.action === 'install'
          ? 'no connected site is selected'
          : `no selected connected site has the ${input.type} ${input.slug} (as of its last sync)`,
        { action: input.action, slug: input.slug },
      );
    if (ids.length > MAX_SITES)
      throw fleetActionsProblems.selection.create(`select at most ${MAX_SITES} sites at once`, { sites: ids.length });
    const now = clock.now();
    const found = await sites.statesOf(ids);
    const results: FleetActionSite[] = ids.map((siteId) => {
      const site = found.get(siteId);
      const connected = site?.state === 'connected';
      return {
        siteId,
        url: site?.url ?? '',
        state: connected ? 'queued' : 'skipped',
        reason: connected ? null : 'site-not-connected',
        message: connected ? null : `the site is ${site?.state ?? 'gone'}`,
        version: null,
        status: null,
        finishedAt: connected ? null : now.toISOString(),
      };
    });
    return {
      id: createId('fact', now),
      kind: FLEET_ACTION,
      siteId: null,
      params: {
        action: input.action,
        type: input.type,
        slug: input.slug,
        activate: input.activate === true,
        deactivate: input.deactivate === true,
        requestedBy,
      },
      progress: { sites: results },
      createdAt: now,
    };
  };
}
