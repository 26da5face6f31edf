/** A restore point the connector took: the saved copy's id and the plugin, theme or core (`core`) it puts back. */
export interface RestorePointRef {
  id: string;
  target: string;
}

/** Before a plain update: the restore point, or why none was taken (the update goes on without one). */
export type PlainRestorePoint = { restorePoint: RestorePointRef } | { restorePoint: null; reason: string };

/**
 * What a plain plugin, theme or core update and the rollback of its history entry need of the
 * restore points (safe-updates' `createPlainRestorePoints` provides them; the composition passes
 * them in): taken first, the version on disk read without WordPress after a failure, a copy no
 * update followed removed, a copy put back.
 */
export interface RestorePoints {
  /** Before a plain update of the site's plugin, theme or core (slug `wordpress`). Never throws. */
  before(siteId: string, type: 'plugin' | 'theme' | 'core', slug: string): Promise<PlainRestorePoint>;
  /** The version on disk of a plugin (dir/file.php) or theme (stylesheet); null: not there; undefined: cannot tell. Never throws. */
  versionOnDisk(siteId: string, type: 'plugin' | 'theme', file: string): Promise<string | null | undefined>;
  /** Removes a restore point no update followed. Never throws. */
  discard(siteId: string, point: RestorePointRef): Promise<void>;
  /** Puts the restore point back without WordPress, in the site's turn. */
  rollBack(siteId: string, point: RestorePointRef): Promise<void>;
}
