import { defineSettings, positiveInt } from '../shared/settings.js';

/** Calls to sites: time limits, answer size, sites worked on at once, sync and approval times; read by src/config.ts. */
export const SITE_CALL_SETTINGS = defineSettings({
  SITEWARDEN_SITE_TIMEOUT_MS: {
    schema: positiveInt('SITEWARDEN_SITE_TIMEOUT_MS', 15_000, 600_000),
    default: '15000',
    doc: 'time limit of one request to a site',
    comment: 'Calls to sites: time limit per request, largest answer accepted, sites worked on at once.',
  },
  SITEWARDEN_SITE_OPERATION_TIMEOUT_MS: {
    schema: positiveInt('SITEWARDEN_SITE_OPERATION_TIMEOUT_MS', 120_000, 3_600_000),
    default: '120000',
    doc: 'time limit of installs, updates and other operations that make WordPress work hard',
  },
  SITEWARDEN_SITE_MAX_RESPONSE_BYTES: {
    schema: positiveInt('SITEWARDEN_SITE_MAX_RESPONSE_BYTES', 16 * 1024 * 1024),
    default: String(16 * 1024 * 1024),
    doc: 'largest answer accepted from a site',
  },
  SITEWARDEN_SITE_CONCURRENCY: {
    schema: positiveInt('SITEWARDEN_SITE_CONCURRENCY', 4, 256),
    default: '4',
    doc: 'sites worked on at once by syncs and single-site operations (one task at a time per site); bulk update sites are bounded by `SITEWARDEN_BULK_UPDATE_CONCURRENCY` instead, not by this too',
  },
  SITEWARDEN_SYNC_INTERVAL_MINUTES: {
    schema: positiveInt('SITEWARDEN_SYNC_INTERVAL_MINUTES', 720, 7 * 24 * 60),
    default: '720',
    doc: 'how often each site’s inventory (plugins, themes, versions, updates offered) is re-read, each site at its own fixed slot in the interval; a failed sync is retried after an hour',
    comment: "How often each site's plugins and themes are re-read.",
  },
  SITEWARDEN_AUTHORIZATION_TTL_MINUTES: {
    schema: positiveInt('SITEWARDEN_AUTHORIZATION_TTL_MINUTES', 60, 7 * 24 * 60),
    default: '60',
    doc: 'how long an admin has to approve a pending connection',
    comment: 'How long an admin has to approve a connection in wp-admin.',
  },
});
