// WordPress core and translation updates on one site; a bulk job calls these per site.
export { createWordPressUpdatesService, type WordPressUpdatesService } from './wordpress-updates.service.js';
export { createWordPressUpdatesRoutes } from './wordpress-updates.routes.js';
export { wordpressUpdatesProblems } from './wordpress-updates.errors.js';
