// The fleet feature's door: questions asked across every site, answered from the inventory rows.
export { createFleetRepository, type FleetRepository } from './fleet.repository.js';
export { createFleetRoutes } from './fleet.routes.js';
export { createFleetRefresh, refreshProblems, type FleetRefresh } from './fleet.refresh.js';
