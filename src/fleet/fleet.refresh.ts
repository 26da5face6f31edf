import { z } from '@hono/zod-openapi';
import { defineProblem } from '../shared/errors.js';
import { sitesProblems, TagFilter, type SitesRepository } from '../sites/index.js';

const MAX_SITES_PER_REQUEST = 10_000;

export const RefreshInput = z
  .object({
    sites: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(MAX_SITES_PER_REQUEST)
      .optional()
      .openapi({ description: 'These sites (ids).' }),
    tag: TagFilter.openapi({ description: 'The connected sites carrying all these tags.' }),
    all: z.literal(true).optional().openapi({ description: 'Every connected site.' }),
  })
  .openapi('FleetRefreshInput');

/** Shared with the fleet actions, which select sites the same way. */
export const refreshProblems = {
  selection: defineProblem('invalid-selection', 400, 'Select sites by exactly one of sites, tag or all'),
};

/** What to read again now, ahead of the schedule: one site, a tag, or the whole fleet. */
export function createFleetRefresh({
  sites,
  sync,
}: {
  sites: Pick<SitesRepository, 'connectedIds' | 'statesOf'>;
  sync: { enqueue(siteIds: readonly string[]): number };
}) {
  return {
    async refresh(input: z.infer<typeof RefreshInput>): Promise<{ selected: number; queued: number }> {
      const ways = [input.sites !== undefined, input.tag.length > 0, input.all === true].filter(Boolean).length;
      if (ways !== 1) throw refreshProblems.selection.create('give `sites`, `tag` or `all: true`, and only one');
      let ids: string[];
      if (input.sites) {
        const found = await sites.statesOf(input.sites);
        const unknown = input.sites.filter((id) => found.get(id)?.state !== 'connected');
        if (unknown.length > 0)
          throw sitesProblems.notFound.create(`no connected site has the id ${unknown.slice(0, 10).join(', ')}`, {
            siteIds: unknown.slice(0, 100),
          });
        ids = [...new Set(input.sites)];
      } else {
        ids = await sites.connectedIds(input.all ? {} : { tag: input.tag });
      }
      return { selected: ids.length, queued: sync.enqueue(ids) };
    },
  };
}

export type FleetRefresh = ReturnType<typeof createFleetRefresh>;
