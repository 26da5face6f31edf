<?php
/**
 * What the daemon needs to know about the site before asking it to do anything.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

final class Sitewarden_Connector_Info {

	/** What the calling user may do, as far as the daemon's features are concerned. */
	const CAPABILITIES = array(
		'update_plugins',
		'update_themes',
		'switch_themes',
		'delete_themes',
		'install_themes',
		'install_plugins',
		'activate_plugins',
		'delete_plugins',
	);

	/** The connector release that added each feature; the daemon refuses a feature to an older connector. */
	const FEATURES = array(
		'updates'        => '1.0.0',
		'plugins/update' => '1.0.0',
		'themes'         => '1.0.0',
		'backups'        => '1.2.0',
		'restore'        => '1.2.0',
		'plugins/status' => '1.3.0',
		'core'           => '1.3.0',
		'translations'   => '1.3.0',
		'inventory'      => '1.4.0',
		'rollback'       => '1.4.0',
		// Plugin and theme updates that name the version they expect, answering a refusal or the offer left.
		'updates/expected-version' => '1.5.0',
		// A single-use link that signs the application password's user in to wp-admin.
		'admin-login'              => '1.6.0',
		// A theme installed by slug from the theme directory.
		'themes/install'           => '1.8.0',
	);

	/**
	 * @return array
	 */
	public function describe() {
		Sitewarden_Connector_Admin_Apis::load();

		$capabilities = array();
		foreach ( self::CAPABILITIES as $capability ) {
			$capabilities[ $capability ] = current_user_can( $capability );
		}

		$filesystem = get_filesystem_method();

		return array(
			'connector'    => SITEWARDEN_CONNECTOR_VERSION,
			'wordpress'    => get_bloginfo( 'version' ),
			'php'          => PHP_VERSION,
			'multisite'    => is_multisite(),
			'filesystem'   => $filesystem ? $filesystem : 'none',
			'capabilities' => $capabilities,
			'features'     => array_keys( self::FEATURES ),
			'timezone'     => array(
				'string'    => (string) get_option( 'timezone_string' ),
				'gmtOffset' => (float) get_option( 'gmt_offset' ),
			),
			'database'     => self::database(),
		);
	}

	/**
	 * The database server as it names itself (MariaDB's older clients see a `5.5.5-` prefix).
	 *
	 * @return array|null { type: mysql|mariadb, version }
	 */
	private static function database() {
		global $wpdb;
		if ( ! is_object( $wpdb ) || ! method_exists( $wpdb, 'db_server_info' ) ) {
			return null;
		}
		$server = preg_replace( '/^5\.5\.5-/', '', (string) $wpdb->db_server_info() );
		if ( 1 !== preg_match( '/^\d+(\.\d+)*/', $server, $version ) ) {
			return null;
		}
		return array(
			'type'    => false !== stripos( $server, 'mariadb' ) ? 'mariadb' : 'mysql',
			'version' => $version[0],
		);
	}
}
