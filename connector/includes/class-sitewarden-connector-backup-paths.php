<?php
/**
 * Which paths a backup or restore may touch, and where they are on disk.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * Nothing that arrives in a request is trusted as a path: it must be relative to the
 * WordPress root, without `..`, `.`, NUL or backslashes, and must resolve inside it even
 * when a directory on the way is a symlink (no zip-slip).
 */
final class Sitewarden_Connector_Backup_Paths {

	const STAGING_PREFIX = 'sitewarden-restore-';

	/** @return string The WordPress root without a trailing slash. */
	public function root() {
		return untrailingslashit( wp_normalize_path( ABSPATH ) );
	}

	/**
	 * @param mixed $path A relative path from a request.
	 * @return string|WP_Error The absolute path, or sitewarden_unsafe_path (400).
	 */
	public function resolve( $path ) {
		if ( ! is_string( $path ) || '' === $path || strlen( $path ) > 4096 ) {
			return $this->unsafe( $path, 'it is empty or too long' );
		}
		if ( false !== strpos( $path, "\0" ) || false !== strpos( $path, '\\' ) ) {
			return $this->unsafe( $path, 'it contains a NUL byte or a backslash' );
		}
		if ( '/' === $path[0] || preg_match( '#^[A-Za-z]:#', $path ) ) {
			return $this->unsafe( $path, 'it is absolute' );
		}
		foreach ( explode( '/', $path ) as $segment ) {
			if ( '' === $segment || '.' === $segment || '..' === $segment ) {
				return $this->unsafe( $path, 'it has an empty, "." or ".." segment' );
			}
		}
		$root     = $this->root();
		$absolute = $root . '/' . $path;

		// The deepest existing ancestor must really be inside the root (a symlinked directory could lead out).
		$ancestor = dirname( $absolute );
		while ( ! file_exists( $ancestor ) && strlen( $ancestor ) > strlen( $root ) ) {
			$ancestor = dirname( $ancestor );
		}
		$real_root     = realpath( $root );
		$real_ancestor = realpath( $ancestor );
		if ( false === $real_root || false === $real_ancestor || ( $real_ancestor !== $real_root && 0 !== strpos( $real_ancestor . '/', $real_root . '/' ) ) ) {
			return $this->unsafe( $path, 'it leads outside the WordPress root' );
		}
		return $absolute;
	}

	/**
	 * Paths a restore never writes or deletes: the site's configuration, the connector itself
	 * (the daemon needs it to finish) and restore staging directories.
	 *
	 * @param string $path Relative path.
	 * @return bool
	 */
	public function is_protected( $path ) {
		$connector = $this->relative( wp_normalize_path( dirname( __DIR__ ) ) );
		if ( 'wp-config.php' === $path || ( null !== $connector && ( $path === $connector || 0 === strpos( $path, $connector . '/' ) ) ) ) {
			return true;
		}
		return $this->is_skipped( $path );
	}

	/**
	 * Paths a backup leaves out (and a restore leaves alone): caches, upgrade leftovers, the
	 * maintenance flag, restore staging, safe updates' restore points and rollback secret.
	 *
	 * @param string $path Relative path.
	 * @return bool
	 */
	public function is_skipped( $path ) {
		$content = $this->relative( wp_normalize_path( WP_CONTENT_DIR ) );
		if ( '.maintenance' === $path ) {
			return true;
		}
		if ( null === $content ) {
			return false;
		}
		foreach ( array( 'upgrade', 'cache', 'sitewarden-rollback' ) as $skipped ) {
			$dir = $content . '/' . $skipped;
			if ( $path === $dir || 0 === strpos( $path, $dir . '/' ) ) {
				return true;
			}
		}
		return 0 === strpos( $path, $content . '/' . self::STAGING_PREFIX );
	}

	/**
	 * @param string $absolute Normalised absolute path.
	 * @return string|null Relative to the root, or null when outside it.
	 */
	public function relative( $absolute ) {
		$root = $this->root();
		if ( 0 !== strpos( $absolute, $root . '/' ) ) {
			return null;
		}
		return substr( $absolute, strlen( $root ) + 1 );
	}

	private function unsafe( $path, $why ) {
		return new WP_Error(
			'sitewarden_unsafe_path',
			sprintf( 'Refused the path %1$s: %2$s.', is_string( $path ) ? wp_json_encode( $path ) : 'given', $why ),
			array( 'status' => 400 )
		);
	}
}
