// The sites feature's door: what other features and the composition may use. Everything else in sites/ is private.
export { sites, siteStates, type SiteRow, type SiteState, type NewSiteRow } from './sites.table.js';
export { sitesProblems } from './sites.errors.js';
export { createSitesRepository, type SiteListRow, type SitesRepository } from './sites.repository.js';
export { createSitesService, AUTHORIZATION_CALLBACK_PATH, type SitesService } from './sites.service.js';
export { createSiteLifecycle, type SiteLifecycle } from './site-lifecycle.js';
export { createSiteDirectory, siteCredentials } from './site-directory.js';
export {
  AuthorizationCallbackQuery,
  ConnectSiteInput,
  ListSitesQuery,
  SiteIdParam,
  SiteIdPathParam,
  SlugPattern,
} from './sites.schemas.js';
