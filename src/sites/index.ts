// The sites feature's door: what other features may use. The composition (services.ts) builds the rest itself.
export { sites, siteStates, siteTags, type SiteRow } from './sites.table.js';
/** The same tables in the PostgreSQL dialect, for the foreign keys and joins of other features' tables there. */
export { sites as pgSites, siteTags as pgSiteTags } from './sites.pg-table.js';
export { sitesProblems } from './sites.errors.js';
export type { SiteListRow, SitesRepository } from './sites.repository.js';
export { AUTHORIZATION_CALLBACK_PATH, type SitesService } from './sites.service.js';
export type { ConnectedSiteNotice, SiteLifecycle } from './site-lifecycle.js';
export { siteCredentials } from './site-directory.js';
export {
  AuthorizationCallbackQuery,
  ConnectSiteInput,
  ListSitesQuery,
  SiteIdParam,
  SiteIdPathParam,
  SiteTagsInput,
  TagFilter,
  TagName,
  SlugPattern,
} from './sites.schemas.js';
export { visibleSites } from './visible-sites.js';
