import { defineSettings, positiveInt } from '../shared/settings.js';

export interface BulkUpdatesConfig {
  /**
   * Site updates at once across every bulk update (`SITEWARDEN_BULK_UPDATE_CONCURRENCY`); their site tasks are not
   * bounded again by the site task queue's `SITEWARDEN_SITE_CONCURRENCY` (underOwnBound).
   */
  concurrency: number;
  /** Site updates at once on one host, the hostname of the sites' URLs (`SITEWARDEN_BULK_UPDATE_PER_HOST`). */
  perHost: number;
}

export const DEFAULT_BULK_UPDATES_CONFIG: BulkUpdatesConfig = { concurrency: 8, perHost: 2 };

/** SITEWARDEN_BULK_UPDATE_*, read by src/config.ts. */
export const BULK_UPDATE_SETTINGS = defineSettings({
  SITEWARDEN_BULK_UPDATE_CONCURRENCY: {
    schema: positiveInt('SITEWARDEN_BULK_UPDATE_CONCURRENCY', DEFAULT_BULK_UPDATES_CONFIG.concurrency, 256),
    default: String(DEFAULT_BULK_UPDATES_CONFIG.concurrency),
    doc: 'sites bulk updates (all of them together) update at once, whatever `SITEWARDEN_SITE_CONCURRENCY` is (each site still one task at a time)',
    comment:
      "Bulk updates (POST /api/fleet/updates/apply, policies): sites updated at once over every bulk\nupdate, and at most this many of them on one host (the hostname of the sites' URLs).",
  },
  SITEWARDEN_BULK_UPDATE_PER_HOST: {
    schema: positiveInt('SITEWARDEN_BULK_UPDATE_PER_HOST', DEFAULT_BULK_UPDATES_CONFIG.perHost, 64),
    default: String(DEFAULT_BULK_UPDATES_CONFIG.perHost),
    doc: 'of those, sites on one host (the hostname of their URL) at once',
  },
});
