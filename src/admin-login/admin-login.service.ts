import type { Actor } from '../shared/actor.js';
import type { Events } from '../shared/event-bus.js';
import { sitesProblems, type SiteRow, type SitesRepository } from '../sites/index.js';
import { connectorVersionHas } from '../wordpress/connector-client.js';
import type { SiteAccess } from '../wordpress/site-access.js';
import { adminLoginProblems } from './admin-login.errors.js';
import type { AdminLoginRepository } from './admin-login.repository.js';
import type { AdminLoginLink, AdminLoginSettings, AdminLoginSettingsPatch } from './admin-login.schemas.js';

/**
 * One-click sign-in to a site's wp-admin: the site's connector mints a single-use link for the
 * WordPress user Sitewarden acts as, and each link given out is an event (`site.admin-login`)
 * naming who asked. The link itself is a secret: it goes back to the caller only.
 */
export function createAdminLoginService({
  repository,
  sitesRepository,
  access,
  events,
}: {
  repository: AdminLoginRepository;
  sitesRepository: Pick<SitesRepository, 'findById'>;
  access: Pick<SiteAccess, 'read'>;
  events: Events;
}) {
  async function requireSite(siteId: string): Promise<SiteRow> {
    const site = await sitesRepository.findById(siteId);
    if (!site) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
    return site;
  }
  const settingsOf = async (siteId: string): Promise<AdminLoginSettings> => ({
    enabled: (await repository.readSettings(siteId))?.enabled ?? true,
  });

  return {
    settings: async (siteId: string): Promise<AdminLoginSettings> => {
      await requireSite(siteId);
      return settingsOf(siteId);
    },

    /** Validates the patch and returns the write that applies it (a settings section's contract). */
    async prepareSettings(siteId: string, patch: AdminLoginSettingsPatch): Promise<() => Promise<AdminLoginSettings>> {
      await requireSite(siteId);
      return async () => {
        if (patch.enabled !== undefined) await repository.writeSettings({ siteId, enabled: patch.enabled ?? true });
        return settingsOf(siteId);
      };
    },

    /** Whether to offer the sign-in: the site is connected, has it on, and its connector (as last synced) has the route. */
    offered: async (site: Pick<SiteRow, 'id' | 'state' | 'connectorVersion'>): Promise<boolean> =>
      site.state === 'connected' &&
      connectorVersionHas(site.connectorVersion, 'admin-login') &&
      (await settingsOf(site.id)).enabled,

    /**
     * A link that signs in to the site's wp-admin once, within about a minute. Refused before
     * any request to the site when the site has it turned off.
     */
    async link(siteId: string, requestedBy: Actor): Promise<AdminLoginLink> {
      const site = await requireSite(siteId);
      if (!(await settingsOf(siteId)).enabled)
        throw adminLoginProblems.disabled.create(
          `one-click sign-in is turned off for ${site.url}; turn it on with PATCH /api/sites/${siteId} {"adminLogin": {"enabled": true}}`,
        );
      const link = await access.read(siteId, ({ site: accessed, connector }) => connector.adminLoginLink(accessed.url));
      events.emit('site.admin-login', {
        siteId,
        url: site.url,
        wordpressUser: site.username,
        requestedByKind: requestedBy.kind,
        requestedById: requestedBy.id,
        expiresAt: link.expiresAt,
      });
      return link;
    },
  };
}

export type AdminLoginService = ReturnType<typeof createAdminLoginService>;
