<?php
/**
 * Updating one theme to the newest version WordPress knows of.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

final class Sitewarden_Connector_Theme_Updates {

	/** @var Sitewarden_Connector_Updates */
	private $updates;

	/** @var Sitewarden_Connector_Filesystem */
	private $filesystem;

	/** @var Sitewarden_Connector_Upgrader_Runner */
	private $runner;

	public function __construct( Sitewarden_Connector_Updates $updates, Sitewarden_Connector_Filesystem $filesystem, Sitewarden_Connector_Upgrader_Runner $runner ) {
		$this->updates    = $updates;
		$this->filesystem = $filesystem;
		$this->runner     = $runner;
	}

	/**
	 * @param string $stylesheet Theme directory name.
	 * @return array|WP_Error { stylesheet, previousVersion, version, active }
	 */
	public function update( $stylesheet ) {
		Sitewarden_Connector_Admin_Apis::load();

		$theme = wp_get_theme( $stylesheet );
		if ( ! $theme->exists() ) {
			return new WP_Error( 'sitewarden_theme_not_found', sprintf( 'No theme %s is installed.', $stylesheet ), array( 'status' => 404 ) );
		}
		$previous_version = (string) $theme->get( 'Version' );

		$offer = $this->updates->theme_offer( $stylesheet );
		if ( null === $offer ) {
			if ( ! $this->updates->refresh_themes() ) {
				return new WP_Error(
					'sitewarden_update_failed',
					sprintf( 'Could not find out whether %s has an update: the update server did not answer.', $stylesheet ),
					array( 'status' => 500 )
				);
			}
			$offer = $this->updates->theme_offer( $stylesheet );
		}
		if ( null === $offer ) {
			return new WP_Error(
				'sitewarden_no_update',
				sprintf( '%1$s is at version %2$s and no newer version is known.', $stylesheet, $previous_version ),
				array(
					'status'  => 409,
					'version' => $previous_version,
				)
			);
		}

		$connected = $this->filesystem->connect( get_theme_root( $stylesheet ) );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}

		// Theme_Upgrader keeps the active theme active (in maintenance mode meanwhile), so there is nothing to restore.
		$upgrader = $this->runner->upgrade( 'Theme_Upgrader', $stylesheet );
		if ( is_wp_error( $upgrader ) ) {
			return $upgrader;
		}

		$new_stylesheet = empty( $upgrader->result['destination_name'] ) ? $stylesheet : (string) $upgrader->result['destination_name'];

		// WP_Theme caches headers per request; read style.css again.
		wp_get_theme( $new_stylesheet )->cache_delete();
		$updated = wp_get_theme( $new_stylesheet );

		return array(
			'stylesheet'      => $new_stylesheet,
			'previousVersion' => $previous_version,
			'version'         => (string) $updated->get( 'Version' ),
			'active'          => get_stylesheet() === $new_stylesheet,
		);
	}

	/**
	 * Since 1.5.0: the theme counterpart of Sitewarden_Connector_Plugin_Updates::update_expecting().
	 *
	 * @param string $stylesheet Theme directory name.
	 * @param string $expected   The version expected to be offered, or ''.
	 * @return array|WP_Error { result: updated, stylesheet, previousVersion, version, active, offer } or a refusal.
	 */
	public function update_expecting( $stylesheet, $expected ) {
		Sitewarden_Connector_Admin_Apis::load();

		$theme   = wp_get_theme( $stylesheet );
		$version = $theme->exists() ? (string) $theme->get( 'Version' ) : null;
		$offer   = null === $version ? null : $this->updates->current_theme_offer( $stylesheet );
		$refusal = Sitewarden_Connector_Updates::refusal_unless_offered( $stylesheet, $version, $offer, $expected );
		if ( null !== $refusal ) {
			return $refusal;
		}

		$updated = $this->update( $stylesheet );
		if ( is_wp_error( $updated ) ) {
			return $updated;
		}
		return array_merge(
			array( 'result' => 'updated' ),
			$updated,
			array( 'offer' => $this->updates->theme_offer( $updated['stylesheet'] ) )
		);
	}
}
