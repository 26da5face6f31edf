import type { SiteScope } from '../shared/actor.js';
import type { SiteTaskQueue } from '../jobs/site-task-queue.js';
import type { SiteLifecycle } from './site-lifecycle.js';
import type { Clock } from '../shared/clock.js';
import type { SecretBox } from '../shared/secret-box.js';
import type { SiteHttp } from '../wordpress/site-http.js';
import type { WordPressClient } from '../wordpress/wordpress-client.js';
import { createSiteChecks } from './site-checks.js';
import { createSiteConnection } from './site-connection.js';
import { sitesProblems } from './sites.errors.js';
import type { SitesRepository } from './sites.repository.js';
import { siteCredentials } from './site-directory.js';
import type { SiteRow, SiteState } from './sites.table.js';
import type { SiteListFilter } from './sites.schemas.js';
import type { Events } from '../shared/event-bus.js';

/**
 * The sites feature's service, one object composed of its parts: connecting a site
 * (site-connection.ts, over the checks a site must pass: site-checks.ts), then here what follows:
 * its tags, the checks that a request may see it, listing and finding sites, and disconnecting one
 * (its application password revoked on the site, best effort).
 */

export { AUTHORIZATION_CALLBACK_PATH } from './site-connection.js';

export interface SitesServiceDeps {
  repository: SitesRepository;
  http: SiteHttp;
  wordpress: WordPressClient;
  secrets: SecretBox;
  /** Reads a newly connected site's inventory (the inventory feature's sync, wired in services.ts). */
  sync: { syncNow(siteId: string): Promise<SiteRow | undefined> };
  queue: SiteTaskQueue;
  lifecycle: SiteLifecycle;
  clock: Clock;
  events: Events;
  publicUrl: string;
  authorizationTtlMinutes: number;
}

export function createSitesService(deps: SitesServiceDeps) {
  const { repository, wordpress, secrets, events } = deps;
  const { connect, completeAuthorization, expireAuthorizations } = createSiteConnection({
    ...deps,
    checks: createSiteChecks(deps),
  });

  async function removeSite(id: string): Promise<void> {
    const site = await repository.findById(id);
    if (!site) return;
    let credentialRevoked = false;
    if (site.state === 'connected' && site.applicationPasswordUuid) {
      try {
        await wordpress.session(siteCredentials(site, secrets)).revokeApplicationPassword(site.applicationPasswordUuid);
        credentialRevoked = true;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        events.emit('site.credential_revoke_failed', { siteId: site.id, url: site.url, reason });
      }
    }
    await repository.delete(site.id);
    deps.lifecycle.removed(site.id);
    events.emit('site.disconnected', { siteId: site.id, url: site.url, credentialRevoked });
  }

  async function checkVisible(id: string, scope: SiteScope): Promise<void> {
    if (scope.kind === 'all') return;
    if (!(await repository.isVisible(id, scope))) throw sitesProblems.notFound.create(`no site has the id ${id}`);
  }

  return {
    connect,

    /** Replaces the site's tags; `tags` come validated and normalised by TagList. */
    async setTags(id: string, tags: string[]): Promise<string[]> {
      if (!(await repository.findById(id))) throw sitesProblems.notFound.create(`no site has the id ${id}`);
      await repository.setTags(id, tags);
      return (await repository.tagsOf([id])).get(id) ?? [];
    },
    tagsOf: (ids: readonly string[]) => repository.tagsOf(ids),
    /** Tags in use on the sites `scope` includes (absent: every site), with their counts. */
    tagCounts: (scope?: SiteScope) => repository.tagCounts(scope),
    /**
     * A request's site: `site-not-found` when no site has the id or `scope` excludes it, the same
     * answer for both, so a scoped principal cannot tell another client's site exists.
     */
    checkVisible,
    /** checkVisible for a request's access (http/permissions.ts's SiteScopeCheck). */
    checkVisibleTo: (id: string, access: { sites: SiteScope }): Promise<void> => checkVisible(id, access.sites),

    completeAuthorization,

    list: (options: {
      limit: number;
      after?: string;
      state?: SiteState;
      filter?: Partial<SiteListFilter>;
      /** Only the sites a request may see. */
      scope?: SiteScope;
    }) =>
      repository.list({
        limit: options.limit + 1,
        after: options.after,
        states: options.state ? [options.state] : undefined,
        filter: options.filter,
        scope: options.scope,
      }),

    /** The site, or undefined when no site has the id (a page that shows ids it was given, say). */
    find: (id: string): Promise<SiteRow | undefined> => repository.findById(id),

    async get(id: string): Promise<SiteRow> {
      const site = await repository.findById(id);
      if (!site) throw sitesProblems.notFound.create(`no site has the id ${id}`);
      return site;
    },

    /** Removes the site; revoking its application password on the site is best effort. */
    async disconnect(id: string): Promise<void> {
      if (!(await repository.findById(id))) throw sitesProblems.notFound.create(`no site has the id ${id}`);
      // Queued behind any running sync or operation on the site, so none writes after removal.
      await deps.queue.run(id, () => removeSite(id));
    },

    expireAuthorizations,
  };
}

export type SitesService = ReturnType<typeof createSitesService>;
