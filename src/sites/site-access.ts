import type { SiteTaskQueue } from '../jobs/site-task-queue.js';
import { createConnector, type Connector } from '../wordpress/connector-client.js';
import type { WordPressSession } from '../wordpress/wordpress-client.js';
import { sitesProblems } from './sites.errors.js';
import type { SitesRepository } from './sites.repository.js';
import type { SiteSync } from './sites.sync.js';
import type { SiteRow } from './sites.table.js';

export interface ConnectedSite {
  site: SiteRow;
  session: WordPressSession;
  connector: Connector;
}

/**
 * How feature modules (plugins, themes, backups) work on a site: they name the site, and get
 * its authenticated session and connector inside the site's queue, then the inventory is
 * refreshed so GET /api/sites/{id} shows the result.
 */
export function createSiteAccess({
  repository,
  sync,
  queue,
  operationTimeoutMs,
}: {
  repository: SitesRepository;
  sync: SiteSync;
  queue: SiteTaskQueue;
  operationTimeoutMs: number;
}) {
  function connected(siteId: string): ConnectedSite {
    const site = repository.findById(siteId);
    if (!site) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
    if (site.state !== 'connected')
      throw sitesProblems.notConnected.create(`site ${siteId} is ${site.state.replace(/_/g, ' ')}, not connected`);
    const session = sync.sessionFor(site);
    return { site, session, connector: createConnector(session, { operationTimeoutMs }) };
  }

  return {
    connected,
    /** Reads from the site without queueing behind operations. */
    read<T>(siteId: string, work: (access: ConnectedSite) => Promise<T>): Promise<T> {
      return work(connected(siteId));
    },
    /** Changes the site: one operation per site at a time, then the stored inventory is refreshed. */
    operate<T>(siteId: string, work: (access: ConnectedSite) => Promise<T>): Promise<T> {
      const access = connected(siteId);
      return queue.run(siteId, async () => {
        try {
          return await work(access);
        } finally {
          await sync.syncNow(siteId);
        }
      });
    },
  };
}

export type SiteAccess = ReturnType<typeof createSiteAccess>;
