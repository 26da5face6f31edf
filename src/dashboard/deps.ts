import type { Services } from '../services.js';

/** What the dashboard's pages read and call: the features' services, as services.ts built them. */
export type DashboardServices = Pick<
  Services,
  | 'users'
  | 'fleetOverview'
  | 'sites'
  | 'uptime'
  | 'performance'
  | 'backups'
  | 'plugins'
  | 'themes'
  | 'jobs'
  | 'events'
  | 'webhooks'
  | 'tokens'
  | 'fleet'
  | 'fleetRefresh'
  | 'fleetActions'
  | 'bulkUpdates'
  | 'updatePolicies'
  | 'safeUpdates'
  | 'adminLogin'
  | 'wordpressUpdates'
  | 'clock'
  | 'httpsPublicUrl'
> & {
  inventories: Pick<Services['inventories'], 'read'>;
  connectorZipPath: string;
};
