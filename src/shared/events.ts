/**
 * The catalogue of log events a log pipeline can alert on. Each has a stable name, level and
 * fields; docs/events.md documents the same list (a test keeps the two in step).
 */
export const eventCatalogue = {
  'daemon.started': { level: 'info', fields: ['listen', 'dataDir', 'version'], when: 'The HTTP API is listening.' },
  'daemon.stopping': {
    level: 'info',
    fields: ['signal'],
    when: 'A shutdown signal was received; in-flight work is finishing.',
  },
  'daemon.stopped': { level: 'info', fields: [], when: 'Shutdown completed; the database is closed.' },
  'daemon.permissions_tightened': {
    level: 'warn',
    fields: ['dataDir', 'paths', 'examples'],
    when: 'At start, entries of the data directory readable by others were made owner-only (0700 directories, 0600 files): `paths` of them, the first few in `examples`.',
  },
  'token.bootstrap_created': {
    level: 'warn',
    fields: ['tokenId', 'path'],
    when: 'First start with no API token: an admin token was written to a 0600 file (its path is logged, never the token).',
  },
  'token.created': {
    level: 'info',
    fields: ['tokenId', 'name', 'scope'],
    when: 'An API token was created; `scope` is the deprecated alias of its role, which the event also carries (`role`), with its user (`userId`, null: an operator token from the CLI) and its own site scope tags (`tags`, null: its user’s scope).',
  },
  'token.revoked': {
    level: 'info',
    fields: ['tokenId', 'name', 'userId', 'by'],
    when: 'An API token was revoked; `by` is who did (null: the CLI).',
  },
  'user.bootstrap_created': {
    level: 'warn',
    fields: ['userId', 'path'],
    when: 'First start with no dashboard user: user `admin` was created and its random password written to a 0600 file (its path is logged, never the password).',
  },
  'user.created': { level: 'info', fields: ['userId', 'username', 'role'], when: 'A dashboard user was created.' },
  'user.password_reset': {
    level: 'info',
    fields: ['userId', 'username'],
    when: 'A dashboard user’s password was reset; their sessions ended.',
  },
  'user.password_changed': {
    level: 'info',
    fields: ['userId', 'username'],
    when: 'A user changed their own password; their other sessions ended.',
  },
  'user.role_changed': {
    level: 'info',
    fields: ['userId', 'username', 'from', 'to', 'by'],
    when: 'An owner gave a user another role; the user’s sessions and event streams ended, their tokens follow the new role at once.',
  },
  'user.scope_changed': {
    level: 'info',
    fields: ['userId', 'username', 'tags', 'by'],
    when: 'An owner limited a user to the sites carrying any of `tags` (null: every site); the user’s sessions and event streams ended, their tokens follow at once.',
  },
  'user.deleted': {
    level: 'info',
    fields: ['userId', 'username', 'by'],
    when: 'An owner deleted a user; their sessions ended and their tokens are refused.',
  },
  'user.signed_in': {
    level: 'info',
    fields: ['userId', 'username', 'address', 'method'],
    when: 'A user signed in to the dashboard; `method` is `password` or `oidc` (single sign-on).',
  },
  'user.oidc_linked': {
    level: 'info',
    fields: ['userId', 'username', 'issuer'],
    when: 'A user signed in with single sign-on for the first time and was linked to the provider’s account (created, or an existing account of the same verified e-mail in an allowed domain).',
  },
  'user.oidc_sign_in_refused': {
    level: 'warn',
    fields: ['reason', 'email', 'address'],
    when: 'A single sign-on was refused; `reason` is the problem type (`oidc-domain-refused`, `oidc-no-role`, `oidc-callback-invalid` …), `email` the address the provider gave (null before the provider answered).',
  },
  'user.two_factor_enabled': {
    level: 'info',
    fields: ['userId', 'username'],
    when: 'A user turned two-factor sign-in on (a TOTP app confirmed with a first code); ten recovery codes were shown once.',
  },
  'user.two_factor_disabled': {
    level: 'info',
    fields: ['userId', 'username', 'by'],
    when: 'A user turned their own two-factor sign-in off, proven by a current code or their password; their recovery codes are gone.',
  },
  'user.two_factor_reset': {
    level: 'warn',
    fields: ['userId', 'username', 'by'],
    when: 'An owner (`by`) reset another user’s two-factor (a lost phone): the secret and recovery codes are gone, the user may enrol again.',
  },
  'user.two_factor_required_changed': {
    level: 'info',
    fields: ['required', 'by'],
    when: 'An owner required two-factor of every user, or stopped requiring it; while required, a user without it is sent to enrol at sign-in.',
  },
  'user.recovery_codes_regenerated': {
    level: 'info',
    fields: ['userId', 'username'],
    when: 'A user made ten new recovery codes (proven by a current code); the old ones stopped working.',
  },
  'user.recovery_code_used': {
    level: 'warn',
    fields: ['userId', 'username', 'address', 'remaining'],
    when: 'A user signed in with a recovery code instead of a TOTP code; the code is used up, `remaining` are left.',
  },
  'user.two_factor_failed': {
    level: 'warn',
    fields: ['userId', 'username', 'address'],
    when: 'The second step of a sign-in failed (a wrong, expired or replayed code) after the right password; repeated failures are throttled like passwords.',
  },
  'user.sessions_revoked': {
    level: 'info',
    fields: ['userId', 'username', 'count', 'by'],
    when: 'Sessions of a user were revoked (one, or every other one) by the user or an owner (`by`); their open event streams ended.',
  },
  'user.sign_in_failed': {
    level: 'warn',
    fields: ['username', 'address'],
    when: 'A dashboard sign-in failed (unknown user or wrong password); repeated failures are rate-limited.',
  },
  'site.connection_started': {
    level: 'info',
    fields: ['siteId', 'url'],
    when: 'A site connection is pending the admin’s approval in wp-admin.',
  },
  'site.connected': {
    level: 'info',
    fields: ['siteId', 'url', 'username', 'mode'],
    when: 'A site was connected (mode `credentials` or `authorization`).',
  },
  'site.authorization_rejected': {
    level: 'warn',
    fields: ['siteId', 'url'],
    when: 'The site’s admin rejected the authorization request.',
  },
  'site.authorization_expired': {
    level: 'warn',
    fields: ['siteId', 'url'],
    when: 'A pending authorization was not approved in time.',
  },
  'site.authorization_failed': {
    level: 'warn',
    fields: ['siteId', 'url', 'reason'],
    when: 'The callback carried credentials that the site did not accept.',
  },
  'site.disconnected': { level: 'info', fields: ['siteId', 'url', 'credentialRevoked'], when: 'A site was removed.' },
  'site.credential_revoke_failed': {
    level: 'warn',
    fields: ['siteId', 'url', 'reason'],
    when: 'Removing a site could not revoke its application password on the site; revoke it in wp-admin.',
  },
  'site.sync_failed': {
    level: 'warn',
    fields: ['siteId', 'url', 'reason'],
    when: 'Refreshing a site’s inventory failed. Resolves with `site.sync_recovered`.',
  },
  'site.sync_recovered': {
    level: 'info',
    fields: ['siteId', 'url'],
    when: 'A site whose last sync failed synced again.',
  },
  'site.down': {
    level: 'error',
    fields: ['siteId', 'url', 'cause', 'firstFailureAt'],
    when: 'A site’s failure was confirmed (consecutive failed probes); a downtime event opened at the first failure. Resolves with `site.up`.',
  },
  'site.up': {
    level: 'info',
    fields: ['siteId', 'url', 'downtimeMs', 'downSince'],
    when: 'A site that was down answered again; its downtime event closed.',
  },
  'site.certificate_expiring': {
    level: 'warn',
    fields: ['siteId', 'url', 'daysLeft', 'expiresAt'],
    when: 'A site’s https certificate expires within `SITEWARDEN_UPTIME_CERT_WARNING_DAYS` (once per certificate).',
  },
  'site.admin-login': {
    level: 'info',
    fields: ['siteId', 'url', 'wordpressUser', 'requestedByKind', 'requestedById', 'expiresAt'],
    when: 'A one-click sign-in link to the site’s wp-admin (as `wordpressUser`) was given to a dashboard user or API token (`requestedByKind` `user` or `token`, `requestedById`); the link itself is never logged.',
  },
  'plugin.update_failed': {
    level: 'warn',
    fields: ['siteId', 'url', 'slug', 'fromVersion', 'toVersion', 'reason', 'message'],
    when: 'Updating a plugin on a site failed; `reason` is the problem name the API answered.',
  },
  'theme.update_failed': {
    level: 'warn',
    fields: ['siteId', 'url', 'slug', 'fromVersion', 'toVersion', 'reason', 'message'],
    when: 'Updating a theme on a site failed; `reason` is the problem name the API answered.',
  },
  'theme.installed': {
    level: 'info',
    fields: ['siteId', 'url', 'slug', 'version', 'active', 'requestedByKind', 'requestedById'],
    when: 'A theme was installed on a site from the theme directory (connector 1.8.0+), by a dashboard user or API token (`requestedByKind` `user` or `token`, `requestedById`).',
  },
  'core.updated': {
    level: 'info',
    fields: ['siteId', 'url', 'fromVersion', 'toVersion', 'databaseUpgraded'],
    when: 'WordPress core on a site was updated; `databaseUpgraded` says whether its database upgrade ran.',
  },
  'core.update_failed': {
    level: 'warn',
    fields: ['siteId', 'url', 'fromVersion', 'toVersion', 'reason', 'message'],
    when: 'Updating WordPress core on a site failed; `toVersion` is the version asked for, or null for the newest offered.',
  },
  'update_policy.run_started': {
    level: 'info',
    fields: ['policyId', 'jobId', 'sites', 'targets', 'windowStart', 'windowEnd'],
    when: 'An update policy’s window opened on sites with updates due: one bulk update started for them (`jobId`).',
  },
  'update_policy.hold_released': {
    level: 'info',
    fields: ['holdId', 'siteId', 'type', 'slug', 'version', 'releasedByKind', 'releasedById'],
    when: 'A user released the hold on a version a safe update had rolled back on a site: update policies apply it there again.',
  },
  'translations.updated': {
    level: 'info',
    fields: ['siteId', 'url', 'updated', 'failed'],
    when: 'Language packs were installed on a site: `updated` and `failed` are how many.',
  },
  'translations.update_failed': {
    level: 'warn',
    fields: ['siteId', 'url', 'reason', 'message'],
    when: 'Updating translations on a site failed, wholly or for some packs (`message` names them).',
  },
  'performance.audit_failed': {
    level: 'warn',
    fields: ['siteId', 'url', 'auditId', 'formFactor', 'reason', 'message'],
    when: 'A Lighthouse audit failed; `reason` is one of the stable failure reasons.',
  },
  'performance.regressed': {
    level: 'warn',
    fields: ['siteId', 'url', 'auditId', 'formFactor', 'regressions'],
    when: 'An audit’s performance score or a core metric is worse than the recent median by more than the margin.',
  },
  'backup.completed': {
    level: 'info',
    fields: ['siteId', 'backupId', 'kind', 'files', 'tables', 'bytesTransferred', 'bytesStored', 'durationMs'],
    when: 'A backup completed: every object and its manifest are durably written.',
  },
  'backup.failed': {
    level: 'error',
    fields: ['siteId', 'backupId', 'kind', 'reason', 'message'],
    when: 'A backup failed; earlier backups are untouched.',
  },
  'backup.partial': {
    level: 'warn',
    fields: ['siteId', 'backupId', 'kind', 'targets', 'failedTargets', 'message'],
    when: 'A backup is held whole by the local store (`targets` hold it) but one or more offsite targets (`failedTargets`) did not get their copy; `message` says why, per target.',
  },
  'backup.verified': {
    level: 'info',
    fields: ['jobId', 'siteId', 'backupId', 'target', 'sample', 'objectsChecked', 'requestedByKind', 'requestedById'],
    when: 'A verify job read a backup back from a target and every object matched.',
  },
  'backup.damaged': {
    level: 'error',
    fields: [
      'jobId',
      'siteId',
      'backupId',
      'target',
      'missingObjects',
      'corruptObjects',
      'everythingLost',
      'lostFiles',
      'lostFilePaths',
      'lostTables',
      'requestedByKind',
      'requestedById',
    ],
    when: 'A verify (or what a repair could not mend) found objects of a backup missing or corrupt on a target: the site files and tables they take away.',
  },
  'backup.verify-failed': {
    level: 'error',
    fields: ['jobId', 'kind', 'siteId', 'backupId', 'target', 'reason', 'message'],
    when: 'A verify or repair job could not run to its end (the target could not be read, the daemon stopped).',
  },
  'backup.repaired': {
    level: 'info',
    fields: [
      'jobId',
      'siteId',
      'backupId',
      'target',
      'objectsResent',
      'resentFrom',
      'stillDamaged',
      'requestedByKind',
      'requestedById',
    ],
    when: 'A repair job sent a backup’s missing and corrupt objects on a target again from good copies.',
  },
  'target.pruned': {
    level: 'info',
    fields: [
      'jobId',
      'target',
      'snapshotsForgotten',
      'snapshotsKept',
      'objectsDeleted',
      'objectsKept',
      'unfinishedUploadsRemoved',
    ],
    when: 'A prune of an offsite target finished: what it removed (snapshot records of deleted backups, unreferenced objects, unfinished uploads) and what it kept.',
  },
  'target.prune-failed': {
    level: 'error',
    fields: ['jobId', 'target', 'reason', 'message'],
    when: 'A prune of an offsite target failed; it deleted nothing it could not prove unreferenced.',
  },
  'restore.completed': {
    level: 'info',
    fields: ['siteId', 'restoreId', 'backupId', 'preRestoreBackupId', 'durationMs'],
    when: 'A site was restored from a backup.',
  },
  'restore.failed': {
    level: 'error',
    fields: ['siteId', 'restoreId', 'backupId', 'reason', 'message'],
    when: 'A restore failed.',
  },
  'job.interrupted': {
    level: 'warn',
    fields: ['kind', 'jobId', 'siteId', 'action'],
    when: 'A backup, restore or audit was cut short by a stop of the daemon: `requeued` (it was waiting; queued again at start), `failed` (it was running; failed as `interrupted`) or `retried` (an interrupted backup was queued again as a new backup, `retryId`).',
  },
  'job.cancelled': {
    level: 'info',
    fields: ['kind', 'jobId', 'siteId', 'state', 'requestedByKind', 'requestedById'],
    when: 'A job was cancelled on request (`POST /api/jobs/{id}/cancel`, or the dashboard’s Cancel), by the token or user `requestedBy…` names: at once if it was `queued`, once it stopped if it was `running`.',
  },
  'bulk-update.started': {
    level: 'info',
    fields: ['bulkId', 'triggerKind', 'triggerId', 'sites', 'items'],
    when: 'A bulk update was queued (`POST /api/fleet/updates/apply` or a policy): how many sites and items it covers.',
  },
  'bulk-update.finished': {
    level: 'info',
    fields: ['bulkId', 'state', 'total', 'succeeded', 'failed', 'skipped', 'cancelled', 'durationMs'],
    when: 'A bulk update ended (`succeeded`, `failed` when a site failed, `cancelled`): its sites counted by how they ended.',
  },
  'update.applied': {
    level: 'info',
    fields: ['bulkId', 'siteId', 'type', 'slug', 'fromVersion', 'toVersion'],
    when: 'A bulk update updated one item (plugin, theme, core, translations) on one site.',
  },
  'update.failed': {
    level: 'warn',
    fields: ['bulkId', 'siteId', 'type', 'slug', 'fromVersion', 'toVersion', 'reason', 'message'],
    when: 'A bulk update could not update one item on one site; `reason` is the problem name (`site-operation-failed`, `site-refused`, `site-unreachable`, …).',
  },
  'update.verified': {
    level: 'info',
    fields: [
      'siteId',
      'safeUpdateId',
      'type',
      'slug',
      'fromVersion',
      'toVersion',
      'visualChange',
      'changedRatio',
      'durationMs',
    ],
    when: 'A safe update was kept: the site passed its after-checks. `visualChange` true: a page looks different beyond the threshold (kept, a warning); `changedRatio` is the largest share of pixels changed on a page (null without screenshots).',
  },
  'update.rolled-back': {
    level: 'warn',
    fields: ['siteId', 'safeUpdateId', 'type', 'slug', 'fromVersion', 'toVersion', 'reason', 'message', 'durationMs'],
    when: 'A safe update failed its after-checks and the previous version was put back; the site passed its checks again.',
  },
  'update.rollback-failed': {
    level: 'error',
    fields: ['siteId', 'safeUpdateId', 'type', 'slug', 'fromVersion', 'toVersion', 'reason', 'message'],
    when: 'A safe update broke the site and the rollback did not make it healthy again: someone must look now.',
  },
  'webhook.delivery_failed': {
    level: 'warn',
    fields: ['webhookId', 'deliveryId', 'deliveryEvent', 'target', 'attempts', 'cause', 'httpStatus'],
    when: 'A webhook delivery used all its attempts without a 2xx answer and gave up (`failed`).',
  },
  'webhook.deliveries_dropped': {
    level: 'error',
    fields: ['webhookId', 'droppedEvent', 'pending', 'dropped'],
    when: 'A webhook had `SITEWARDEN_WEBHOOK_MAX_PENDING` deliveries waiting, so new events for it were not queued (logged at most once a minute per webhook).',
  },
} as const satisfies Record<string, { level: 'info' | 'warn' | 'error'; fields: readonly string[]; when: string }>;

export type EventName = keyof typeof eventCatalogue;
export type FieldsOf<E extends EventName> = { [K in (typeof eventCatalogue)[E]['fields'][number]]: unknown };
