import type { SecretBox } from '../shared/secret-box.js';
import type { SiteDirectory } from '../wordpress/site-access.js';
import type { SiteCredentials } from '../wordpress/wordpress-client.js';
import { sitesProblems } from './sites.errors.js';
import type { SiteAccessRow, SitesRepository } from './sites.repository.js';

/** The credentials Sitewarden acts with on a connected site; the application password is unsealed only here. */
export function siteCredentials(
  site: Pick<SiteAccessRow, 'id' | 'state' | 'restUrl' | 'username' | 'credentialSealed'>,
  secrets: SecretBox,
): SiteCredentials {
  if (site.state !== 'connected' || !site.username || !site.credentialSealed)
    throw new Error(`site ${site.id} is not connected`);
  return { restUrl: site.restUrl, username: site.username, applicationPassword: secrets.open(site.credentialSealed) };
}

/** Past this many sites' unsealed passwords, the memo starts again (a bound far above a fleet's size). */
const UNSEALED_MAX = 100_000;

/**
 * How SiteAccess (wordpress/) finds a connected site: a missing site is site-not-found, any other
 * state site-not-connected. Each site's password is unsealed once per sealed value and kept in
 * memory (AES-GCM's decipher costs more than the rest of finding a site; the key that opens every
 * one is in memory anyway): a new password is a new sealed value, so it is never stale.
 */
export function createSiteDirectory({
  repository,
  secrets,
}: {
  repository: SitesRepository;
  secrets: SecretBox;
}): SiteDirectory {
  const unsealed = new Map<string, { sealed: string; password: string }>();
  /** The box a site's credentials open with: its password unsealed once per sealed value. */
  const remembering = (siteId: string): SecretBox => ({
    ...secrets,
    open(sealed) {
      const known = unsealed.get(siteId);
      if (known?.sealed === sealed) return known.password;
      const password = secrets.open(sealed);
      if (unsealed.size >= UNSEALED_MAX) unsealed.clear();
      unsealed.set(siteId, { sealed, password });
      return password;
    },
  });
  return {
    async connected(siteId) {
      const site = await repository.findForAccess(siteId);
      if (!site) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
      if (site.state !== 'connected')
        throw sitesProblems.notConnected.create(`site ${siteId} is ${site.state.replace(/_/g, ' ')}, not connected`);
      const credentials = siteCredentials(site, remembering(siteId));
      return { site, credentials };
    },
  };
}
