<?php
/**
 * Restore points for safe updates: a copy of a plugin's or theme's folder taken before the
 * update, in wp-content/sitewarden-rollback/<id>/, which sitewarden-rollback.php (next to this
 * plugin, without WordPress) can swap back. Also keeps the hash of that endpoint's secret.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

final class Sitewarden_Connector_Rollback {

	/** Saved copies older than this are removed when a new one is taken. */
	const KEEP_SECONDS = 14 * DAY_IN_SECONDS;

	public static function store() {
		return WP_CONTENT_DIR . '/sitewarden-rollback';
	}

	/**
	 * The standalone endpoint finds wp-content from its own place; a site whose plugins or themes
	 * live elsewhere cannot use it, and is told so rather than given a restore point that would not work.
	 *
	 * @return true|WP_Error
	 */
	private function standalone_usable( $directory ) {
		$content = realpath( WP_CONTENT_DIR );
		$here    = realpath( dirname( __DIR__, 3 ) );
		if ( false === $content || $content !== $here || realpath( dirname( $directory ) ) === false ) {
			return new WP_Error( 'sitewarden_rollback_unavailable', 'The standalone rollback path needs the connector in wp-content/plugins/.', array( 'status' => 409 ) );
		}
		if ( 0 !== strpos( realpath( $directory ) . '/', $content . '/' ) ) {
			return new WP_Error( 'sitewarden_rollback_unavailable', 'Only folders under wp-content can be saved for the standalone rollback path.', array( 'status' => 409 ) );
		}
		return true;
	}

	/**
	 * @param string $secret_hash SHA-256 (hex) of the secret the daemon keeps.
	 * @return array|WP_Error
	 */
	public function provision_secret( $secret_hash ) {
		$ready = $this->prepare_store();
		if ( is_wp_error( $ready ) ) {
			return $ready;
		}
		$file = self::store() . '/secret.php';
		// A PHP file that returns the hash: fetched over HTTP it prints nothing.
		$php = "<?php\n// Sitewarden rollback secret (SHA-256 only; the secret stays with the daemon).\nreturn '" . $secret_hash . "';\n";
		if ( false === file_put_contents( $file, $php, LOCK_EX ) ) {
			return new WP_Error( 'sitewarden_filesystem_unavailable', 'Could not write the rollback secret.', array( 'status' => 500 ) );
		}
		chmod( $file, 0640 );
		if ( function_exists( 'opcache_invalidate' ) ) {
			opcache_invalidate( $file, true );
		}
		return array( 'provisioned' => true );
	}

	/**
	 * @param string $type   'plugin' or 'theme'.
	 * @param string $target Plugin file (dir/file.php or file.php) or theme stylesheet.
	 * @return array|WP_Error { id, target, bytes }
	 */
	public function save( $type, $target ) {
		if ( 'core' === $type ) {
			return $this->save_core();
		}
		if ( 'plugin' === $type ) {
			$folder   = false === strpos( $target, '/' ) ? $target : dirname( $target );
			$relative = 'plugins/' . $folder;
			$source   = WP_PLUGIN_DIR . '/' . $folder;
		} else {
			$relative = 'themes/' . $target;
			$source   = get_theme_root( $target ) . '/' . $target;
		}
		if ( ! file_exists( $source ) ) {
			return new WP_Error( 'sitewarden_rollback_nothing_to_save', sprintf( '%s is not on the site.', $relative ), array( 'status' => 404 ) );
		}
		if ( WP_CONTENT_DIR . '/' . $relative !== $source ) {
			return new WP_Error( 'sitewarden_rollback_unavailable', 'The standalone rollback path only knows wp-content/plugins and wp-content/themes.', array( 'status' => 409 ) );
		}
		$usable = $this->standalone_usable( $source );
		if ( is_wp_error( $usable ) ) {
			return $usable;
		}
		$ready = $this->prepare_store();
		if ( is_wp_error( $ready ) ) {
			return $ready;
		}
		$this->prune();

		$id    = gmdate( 'YmdHis' ) . '-' . bin2hex( random_bytes( 4 ) );
		$saved = self::store() . '/' . $id;
		if ( ! mkdir( $saved, 0750 ) ) {
			return new WP_Error( 'sitewarden_filesystem_unavailable', 'Could not create the restore point folder.', array( 'status' => 500 ) );
		}
		$bytes = $this->copy( $source, $saved . '/previous' );
		if ( false === $bytes ) {
			$this->remove( $saved );
			return new WP_Error( 'sitewarden_filesystem_unavailable', sprintf( 'Could not copy %s to the restore point.', $relative ), array( 'status' => 500 ) );
		}
		// Written last: a copy without its manifest is never offered for a restore.
		file_put_contents(
			$saved . '/manifest.json',
			wp_json_encode(
				array(
					'target'  => $relative,
					'type'    => $type,
					'created' => time(),
				)
			),
			LOCK_EX
		);
		return array(
			'id'     => $id,
			'target' => $relative,
			'bytes'  => $bytes,
		);
	}

	/**
	 * WordPress itself: wp-admin, wp-includes and the PHP files at the root (wp-config.php aside),
	 * the standard layout only (wp-content inside the WordPress directory).
	 *
	 * @return array|WP_Error
	 */
	private function save_core() {
		$root = realpath( ABSPATH );
		if ( false === $root || realpath( WP_CONTENT_DIR ) !== $root . '/wp-content' ) {
			return new WP_Error( 'sitewarden_rollback_unavailable', 'The standalone rollback path only knows WordPress with wp-content inside its directory.', array( 'status' => 409 ) );
		}
		$usable = $this->standalone_usable( WP_PLUGIN_DIR );
		if ( is_wp_error( $usable ) ) {
			return $usable;
		}
		$ready = $this->prepare_store();
		if ( is_wp_error( $ready ) ) {
			return $ready;
		}
		$this->prune();
		$id    = gmdate( 'YmdHis' ) . '-' . bin2hex( random_bytes( 4 ) );
		$saved = self::store() . '/' . $id;
		if ( ! mkdir( $saved . '/previous', 0750, true ) ) {
			return new WP_Error( 'sitewarden_filesystem_unavailable', 'Could not create the restore point folder.', array( 'status' => 500 ) );
		}
		$bytes = 0;
		$names = array( 'wp-admin', 'wp-includes' );
		foreach ( (array) glob( $root . '/*.php' ) as $file ) {
			if ( 'wp-config.php' !== basename( $file ) ) {
				$names[] = basename( $file );
			}
		}
		foreach ( $names as $name ) {
			$copied = $this->copy( $root . '/' . $name, $saved . '/previous/' . $name );
			if ( false === $copied ) {
				$this->remove( $saved );
				return new WP_Error( 'sitewarden_filesystem_unavailable', sprintf( 'Could not copy %s to the restore point.', $name ), array( 'status' => 500 ) );
			}
			$bytes += $copied;
		}
		file_put_contents(
			$saved . '/manifest.json',
			wp_json_encode(
				array(
					'target'  => 'core',
					'type'    => 'core',
					'created' => time(),
				)
			),
			LOCK_EX
		);
		return array(
			'id'     => $id,
			'target' => 'core',
			'bytes'  => $bytes,
		);
	}

	/**
	 * @param string $id
	 * @return array
	 */
	public function discard( $id ) {
		$saved = self::store() . '/' . $id;
		$found = is_dir( $saved ) && ! is_link( $saved );
		if ( $found ) {
			$this->remove( $saved );
		}
		return array( 'discarded' => $found );
	}

	/** @return true|WP_Error */
	private function prepare_store() {
		$store = self::store();
		if ( ! is_dir( $store ) && ! mkdir( $store, 0750, true ) ) {
			return new WP_Error( 'sitewarden_filesystem_unavailable', 'Could not create wp-content/sitewarden-rollback.', array( 'status' => 500 ) );
		}
		// Saved copies hold PHP files: never serve or run them from here.
		if ( ! file_exists( $store . '/.htaccess' ) ) {
			file_put_contents( $store . '/.htaccess', "Require all denied\nDeny from all\n" );
		}
		if ( ! file_exists( $store . '/index.php' ) ) {
			file_put_contents( $store . '/index.php', "<?php\n// Silence is golden.\n" );
		}
		return true;
	}

	private function prune() {
		foreach ( (array) glob( self::store() . '/*/manifest.json' ) as $manifest ) {
			if ( filemtime( $manifest ) < time() - self::KEEP_SECONDS ) {
				$this->remove( dirname( $manifest ) );
			}
		}
	}

	/**
	 * @return int|false Bytes copied. Symlinks are copied as links, never followed.
	 */
	private function copy( $source, $destination ) {
		if ( is_link( $source ) ) {
			return symlink( readlink( $source ), $destination ) ? 0 : false;
		}
		if ( is_file( $source ) ) {
			return copy( $source, $destination ) ? (int) filesize( $source ) : false;
		}
		if ( ! mkdir( $destination, 0755 ) ) {
			return false;
		}
		$bytes = 0;
		foreach ( (array) scandir( $source ) as $name ) {
			if ( '.' === $name || '..' === $name ) {
				continue;
			}
			$copied = $this->copy( $source . '/' . $name, $destination . '/' . $name );
			if ( false === $copied ) {
				return false;
			}
			$bytes += $copied;
		}
		return $bytes;
	}

	private function remove( $path ) {
		if ( is_link( $path ) || is_file( $path ) ) {
			unlink( $path );
			return;
		}
		foreach ( (array) scandir( $path ) as $name ) {
			if ( '.' !== $name && '..' !== $name ) {
				$this->remove( $path . '/' . $name );
			}
		}
		rmdir( $path );
	}
}
