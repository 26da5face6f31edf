<?php
/**
 * A restore's staging directory: files arrive here in chunks and move into place at the end.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * wp-content/sitewarden-restore-<id>/ holds files/ (the incoming files under their
 * relative paths), deletions (paths to remove at the end) and tables (staged tables).
 * Writes at an offset need a seekable handle, which WP_Filesystem does not offer, so
 * chunks are written with fopen; moving into place and deleting use WP_Filesystem.
 */
final class Sitewarden_Connector_Restore_Staging {

	const ID = '/^[a-z0-9]{16}$/D';

	/** @var Sitewarden_Connector_Backup_Paths */
	private $paths;

	public function __construct( Sitewarden_Connector_Backup_Paths $paths ) {
		$this->paths = $paths;
	}

	/** @return string|WP_Error The staging directory of a restore that was begun. */
	public function dir( $id, $create = false ) {
		if ( ! is_string( $id ) || ! preg_match( self::ID, $id ) ) {
			return new WP_Error( 'sitewarden_restore_not_found', 'There is no such restore in progress.', array( 'status' => 404 ) );
		}
		$dir = wp_normalize_path( WP_CONTENT_DIR ) . '/' . Sitewarden_Connector_Backup_Paths::STAGING_PREFIX . $id;
		if ( $create ) {
			if ( ! wp_mkdir_p( $dir . '/files' ) ) {
				return new WP_Error( 'sitewarden_filesystem_unavailable', sprintf( 'Cannot create %s.', $dir ), array( 'status' => 500 ) );
			}
			// Nothing staged may ever be served.
			file_put_contents( $dir . '/index.php', "<?php\n// Silence is golden.\n" ); // phpcs:ignore WordPress.WP.AlternativeFunctions
			file_put_contents( $dir . '/.htaccess', "Require all denied\nDeny from all\n" ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		} elseif ( ! is_dir( $dir ) ) {
			return new WP_Error( 'sitewarden_restore_not_found', 'There is no such restore in progress.', array( 'status' => 404 ) );
		}
		return $dir;
	}

	/** Every staging directory, e.g. of restores a crash left behind. */
	public function all() {
		return glob( wp_normalize_path( WP_CONTENT_DIR ) . '/' . Sitewarden_Connector_Backup_Paths::STAGING_PREFIX . '*', GLOB_ONLYDIR ) ?: array();
	}

	/**
	 * @return array|WP_Error
	 */
	public function write( $dir, $path, $offset, $bytes, $mtime ) {
		$checked = $this->writable( $path );
		if ( is_wp_error( $checked ) ) {
			return $checked;
		}
		if ( false === $checked ) {
			return array( 'path' => $path, 'skipped' => true );
		}
		$target = $dir . '/files/' . $path;
		if ( ! wp_mkdir_p( dirname( $target ) ) ) {
			return new WP_Error( 'sitewarden_filesystem_unavailable', sprintf( 'Cannot stage %s.', $path ), array( 'status' => 500 ) );
		}
		$handle = fopen( $target, 'c+b' ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		if ( false === $handle ) {
			return new WP_Error( 'sitewarden_filesystem_unavailable', sprintf( 'Cannot stage %s.', $path ), array( 'status' => 500 ) );
		}
		$offset = max( 0, (int) $offset );
		if ( 0 === $offset ) {
			ftruncate( $handle, 0 );
		}
		fseek( $handle, $offset );
		$written = '' === $bytes ? 0 : fwrite( $handle, $bytes ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		fclose( $handle ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		if ( false === $written || $written !== strlen( $bytes ) ) {
			return new WP_Error( 'sitewarden_filesystem_unavailable', sprintf( 'Could not write all of %s (disk full?).', $path ), array( 'status' => 500 ) );
		}
		if ( $mtime ) {
			touch( $target, (int) $mtime );
		}
		return array( 'path' => $path, 'offset' => $offset, 'written' => $written );
	}

	/** @return true|WP_Error */
	public function plan_deletions( $dir, $paths ) {
		$lines = '';
		foreach ( (array) $paths as $path ) {
			$checked = $this->writable( $path );
			if ( is_wp_error( $checked ) ) {
				return $checked;
			}
			if ( $checked ) {
				$lines .= $path . "\n";
			}
		}
		file_put_contents( $dir . '/deletions', $lines, FILE_APPEND ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		return true;
	}

	/**
	 * Moves every staged file into place and deletes the planned deletions.
	 *
	 * @return array{moved: int, deleted: int}|WP_Error
	 */
	public function apply( $dir ) {
		global $wp_filesystem;
		$root   = $this->paths->root();
		$moved  = 0;
		$staged = $dir . '/files';
		$files  = new RecursiveIteratorIterator( new RecursiveDirectoryIterator( $staged, FilesystemIterator::SKIP_DOTS ) );
		foreach ( $files as $file ) {
			$relative = substr( wp_normalize_path( $file->getPathname() ), strlen( $staged ) + 1 );
			$target   = $this->paths->resolve( $relative );
			if ( is_wp_error( $target ) || $this->paths->is_protected( $relative ) ) {
				continue;
			}
			if ( ! wp_mkdir_p( dirname( $target ) ) || ! $wp_filesystem->move( $file->getPathname(), $target, true ) ) {
				return new WP_Error( 'sitewarden_restore_failed', sprintf( 'Could not put %s in place.', $relative ), array( 'status' => 500 ) );
			}
			++$moved;
		}
		$deleted = 0;
		$planned = is_file( $dir . '/deletions' ) ? file( $dir . '/deletions', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES ) : array();
		foreach ( $planned as $relative ) {
			$target = $this->paths->resolve( $relative );
			if ( ! is_wp_error( $target ) && ! $this->paths->is_protected( $relative ) && is_file( $target ) && ! is_link( $target ) && $wp_filesystem->delete( $target ) ) {
				++$deleted;
			}
		}
		return array( 'moved' => $moved, 'deleted' => $deleted );
	}

	/** @return array|null The finish journal of a restore whose finish has begun. */
	public function journal( $dir ) {
		$journal = is_file( $dir . '/journal.json' ) ? json_decode( (string) file_get_contents( $dir . '/journal.json' ), true ) : null; // phpcs:ignore WordPress.WP.AlternativeFunctions
		return is_array( $journal ) ? $journal : null;
	}

	/**
	 * Written to a temporary name and renamed, so a crash leaves the old journal or the new one, never half of one.
	 *
	 * @return true|WP_Error
	 */
	public function write_journal( $dir, $journal ) {
		$written = file_put_contents( $dir . '/journal.tmp', wp_json_encode( $journal ) ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		if ( false === $written || ! rename( $dir . '/journal.tmp', $dir . '/journal.json' ) ) { // phpcs:ignore WordPress.WP.AlternativeFunctions
			return new WP_Error( 'sitewarden_filesystem_unavailable', 'Cannot write the restore journal (disk full?).', array( 'status' => 500 ) );
		}
		return true;
	}

	/** Where a finished restore leaves its answer, so a finish asked again (its answer lost) gets it again. */
	private function done_file( $id ) {
		return wp_normalize_path( WP_CONTENT_DIR ) . '/' . Sitewarden_Connector_Backup_Paths::STAGING_PREFIX . $id . '.done';
	}

	/** @return array|null The answer of a finished restore. */
	public function done( $id ) {
		if ( ! is_string( $id ) || ! preg_match( self::ID, $id ) || ! is_file( $this->done_file( $id ) ) ) {
			return null;
		}
		$done = json_decode( (string) file_get_contents( $this->done_file( $id ) ), true ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		return is_array( $done ) ? $done : null;
	}

	public function mark_done( $id, $result ) {
		file_put_contents( $this->done_file( $id ), wp_json_encode( $result ) ); // phpcs:ignore WordPress.WP.AlternativeFunctions
	}

	/** Answers of earlier restores, cleared when the next one begins. */
	public function clear_done() {
		foreach ( glob( wp_normalize_path( WP_CONTENT_DIR ) . '/' . Sitewarden_Connector_Backup_Paths::STAGING_PREFIX . '*.done' ) ?: array() as $file ) {
			unlink( $file ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		}
	}

	public function remove( $dir ) {
		global $wp_filesystem;
		$wp_filesystem->delete( $dir, true );
	}

	/**
	 * @return bool|WP_Error An unsafe path is an error; a protected one (wp-config.php, the
	 *                       connector, staging) is false: left as it is on the site.
	 */
	private function writable( $path ) {
		$absolute = $this->paths->resolve( $path );
		if ( is_wp_error( $absolute ) ) {
			return $absolute;
		}
		return ! $this->paths->is_protected( $path );
	}
}
