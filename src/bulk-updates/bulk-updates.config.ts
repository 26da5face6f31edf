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
