import type { SecretBox } from '../shared/secret-box.js';
import type { SiteDirectory } from '../wordpress/site-access.js';
import type { SiteCredentials } from '../wordpress/wordpress-client.js';
import { sitesProblems } from './sites.errors.js';
import type { SitesRepository } from './sites.repository.js';
import type { SiteRow } from './sites.table.js';

/** The credentials Sitewarden acts with on a connected site; the application password is unsealed only here. */
export function siteCredentials(site: SiteRow, secrets: SecretBox): SiteCredentials {
  if (site.state !== 'connected' || !site.username || !site.credentialSealed)
    throw new Error(`site ${site.id} is not connected`);
  return { restUrl: site.restUrl, username: site.username, applicationPassword: secrets.open(site.credentialSealed) };
}

/** How SiteAccess (wordpress/) finds a connected site: a missing site is site-not-found, any other state site-not-connected. */
export function createSiteDirectory({
  repository,
  secrets,
}: {
  repository: SitesRepository;
  secrets: SecretBox;
}): SiteDirectory {
  return {
    connected(siteId) {
      const site = repository.findById(siteId);
      if (!site) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
      if (site.state !== 'connected')
        throw sitesProblems.notConnected.create(`site ${siteId} is ${site.state.replace(/_/g, ' ')}, not connected`);
      return { site, credentials: siteCredentials(site, secrets) };
    },
  };
}
