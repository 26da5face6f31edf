<?php
/**
 * Installing the language packs WordPress's update checks offer.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * Language_Pack_Upgrader, as wp-admin/update-core.php's "Update Translations" runs it: every
 * translation the core, plugin and theme update checks listed, after asking again.
 */
final class Sitewarden_Connector_Translation_Updates {

	/** @var Sitewarden_Connector_Filesystem */
	private $filesystem;

	/** @var Sitewarden_Connector_Upgrader_Runner */
	private $runner;

	public function __construct( Sitewarden_Connector_Filesystem $filesystem, Sitewarden_Connector_Upgrader_Runner $runner ) {
		$this->filesystem = $filesystem;
		$this->runner     = $runner;
	}

	/**
	 * @return array|WP_Error { updated: [{ type, slug, language, version }], failed: [{ type, slug, language, message }] }
	 */
	public function update() {
		Sitewarden_Connector_Admin_Apis::load();

		// The translations lists live in the same transients as the updates; ask the servers again.
		ob_start();
		wp_clean_plugins_cache( true );
		wp_clean_themes_cache( true );
		wp_update_plugins();
		wp_update_themes();
		wp_version_check( array(), true );
		ob_end_clean();

		$offered = wp_get_translation_updates();
		if ( ! $offered ) {
			return new WP_Error( 'sitewarden_no_update', 'No translation updates are offered to this site.', array( 'status' => 409 ) );
		}

		$connected = $this->filesystem->connect( WP_LANG_DIR );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}

		$results  = array();
		$upgrader = $this->runner->run(
			'Language_Pack_Upgrader',
			'the translations',
			static function ( $upgrader ) use ( $offered, &$results ) {
				$results = $upgrader->bulk_upgrade( $offered, array( 'clear_update_cache' => true ) );
				return is_array( $results ) ? true : $results;
			}
		);
		if ( is_wp_error( $upgrader ) ) {
			return $upgrader;
		}

		$updated = array();
		$failed  = array();
		foreach ( array_values( $offered ) as $index => $pack ) {
			$item   = array(
				'type'     => (string) $pack->type,
				'slug'     => (string) $pack->slug,
				'language' => (string) $pack->language,
			);
			$result = isset( $results[ $index ] ) ? $results[ $index ] : false;
			if ( is_array( $result ) || true === $result ) {
				$updated[] = $item + array( 'version' => (string) $pack->version );
			} else {
				$failed[] = $item + array( 'message' => is_wp_error( $result ) ? wp_strip_all_tags( $result->get_error_message() ) : 'WordPress gave no reason.' );
			}
		}
		return array(
			'updated' => $updated,
			'failed'  => $failed,
		);
	}
}
