// Fleet actions: one plugin or theme installed, activated, (a plugin) deactivated or removed across many sites, as a job.
export { createFleetActions, type FleetActions } from './fleet-actions.service.js';
export { createFleetActionsRoutes } from './fleet-actions.routes.js';
export { FleetActionInput, fleetActions, type FleetActionView } from './fleet-actions.schemas.js';
