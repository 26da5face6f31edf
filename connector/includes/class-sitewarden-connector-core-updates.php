<?php
/**
 * Updating WordPress itself to a release WordPress's update check offers.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * Core_Upgrader, as wp-admin/update-core.php drives it: only a version the update
 * server offered (never a package URL from the caller), then the database upgrade
 * WordPress asks for in a request of its own, checked here rather than assumed.
 */
final class Sitewarden_Connector_Core_Updates {

	/** @var Sitewarden_Connector_Filesystem */
	private $filesystem;

	/** @var Sitewarden_Connector_Upgrader_Runner */
	private $runner;

	public function __construct( Sitewarden_Connector_Filesystem $filesystem, Sitewarden_Connector_Upgrader_Runner $runner ) {
		$this->filesystem = $filesystem;
		$this->runner     = $runner;
	}

	/**
	 * @param string $version The offered version to install; '' for the newest offered.
	 * @return array|WP_Error { previousVersion, version, dbVersion, databaseUpgraded }
	 */
	public function update( $version ) {
		Sitewarden_Connector_Admin_Apis::load();
		$previous = $this->installed_versions();

		// Core reports an unreachable update server with trigger_error(), which may be displayed.
		ob_start();
		wp_version_check( array(), true );
		ob_end_clean();
		$offers = self::offers( $previous['version'] );
		if ( null === $offers ) {
			return new WP_Error( 'sitewarden_update_failed', 'Could not find out whether WordPress has an update: the update server did not answer.', array( 'status' => 500 ) );
		}
		if ( ! $offers ) {
			return new WP_Error(
				'sitewarden_no_update',
				sprintf( 'WordPress is at version %s and no newer version is offered.', $previous['version'] ),
				array(
					'status'  => 409,
					'version' => $previous['version'],
				)
			);
		}
		$offer = '' === $version ? $offers[0] : null;
		foreach ( $offers as $candidate ) {
			if ( $candidate->version === $version ) {
				$offer = $candidate;
			}
		}
		if ( null === $offer ) {
			$offered = array_map(
				static function ( $candidate ) {
					return $candidate->version;
				},
				$offers
			);
			return new WP_Error(
				'sitewarden_core_version_not_offered',
				sprintf( 'WordPress %1$s is not offered to this site; offered: %2$s.', $version, implode( ', ', $offered ) ),
				array( 'status' => 409 )
			);
		}

		$connected = $this->filesystem->connect( ABSPATH );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}

		// Hooked in wp-admin only, but it would exit() mid-answer if a plugin loaded admin-filters.php.
		remove_action( '_core_updated_successfully', '_redirect_to_about_wordpress' );
		$upgraded = $this->runner->run(
			'Core_Upgrader',
			'WordPress',
			static function ( $upgrader ) use ( $offer ) {
				return $upgrader->upgrade( $offer );
			}
		);
		if ( is_wp_error( $upgraded ) ) {
			return $upgraded;
		}

		$now = $this->installed_versions();
		if ( $now['dbVersion'] !== $this->database_version() ) {
			// update_core() asked for it already; a failed or slow loopback request is retried once.
			wp_remote_post( admin_url( 'upgrade.php?step=upgrade_db' ), array( 'timeout' => 60 ) );
		}

		return array(
			'previousVersion'  => $previous['version'],
			'version'          => $now['version'],
			'dbVersion'        => $now['dbVersion'],
			'databaseUpgraded' => $now['dbVersion'] === $this->database_version(),
		);
	}

	/**
	 * The releases on offer newer than $installed, newest first; null when the server did not answer.
	 *
	 * @return object[]|null
	 */
	public static function offers( $installed ) {
		$checked = get_site_transient( 'update_core' );
		if ( ! is_object( $checked ) || ! isset( $checked->updates ) || ! is_array( $checked->updates ) ) {
			return null;
		}
		$offers = array();
		foreach ( $checked->updates as $offer ) {
			if ( is_object( $offer ) && isset( $offer->response, $offer->version, $offer->packages ) && 'latest' !== $offer->response
				&& version_compare( $offer->version, $installed, '>' ) ) {
				$offers[] = $offer;
			}
		}
		usort(
			$offers,
			static function ( $a, $b ) {
				return version_compare( $b->version, $a->version );
			}
		);
		return $offers;
	}

	/**
	 * Read from the files, not the globals: after an update the running request still has the old ones.
	 *
	 * @return array { version, dbVersion }
	 */
	private function installed_versions() {
		$read = static function ( $file ) {
			$wp_version    = '';
			$wp_db_version = 0;
			include $file;
			return array(
				'version'   => (string) $wp_version,
				'dbVersion' => (string) $wp_db_version,
			);
		};
		if ( function_exists( 'opcache_invalidate' ) ) {
			opcache_invalidate( ABSPATH . WPINC . '/version.php', true );
		}
		return $read( ABSPATH . WPINC . '/version.php' );
	}

	/**
	 * The database's own record, bypassing the options cache this request loaded before the update.
	 *
	 * @return string
	 */
	private function database_version() {
		global $wpdb;
		return (string) $wpdb->get_var( $wpdb->prepare( "SELECT option_value FROM {$wpdb->options} WHERE option_name = %s", 'db_version' ) );
	}
}
