<?php
/**
 * Installing a theme by slug from the theme directory (since 1.8.0): WordPress's REST API has no route for it.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * What wp-admin's Appearance → Themes → Add New does: themes_api() for the theme's download
 * link, then Theme_Upgrader::install() (which also installs a missing parent theme from the
 * directory). Optionally activated afterwards, as Sitewarden_Connector_Themes activates.
 */
final class Sitewarden_Connector_Theme_Install {

	/** @var Sitewarden_Connector_Filesystem */
	private $filesystem;

	/** @var Sitewarden_Connector_Upgrader_Runner */
	private $runner;

	/** @var Sitewarden_Connector_Themes */
	private $themes;

	public function __construct( Sitewarden_Connector_Filesystem $filesystem, Sitewarden_Connector_Upgrader_Runner $runner, Sitewarden_Connector_Themes $themes ) {
		$this->filesystem = $filesystem;
		$this->runner     = $runner;
		$this->themes     = $themes;
	}

	/**
	 * @param string $slug     The theme's slug in the theme directory (its folder once installed).
	 * @param bool   $activate Switch the site to it once installed.
	 * @return array|WP_Error { stylesheet, name, version, active }; sitewarden_theme_installed (409),
	 *                        sitewarden_theme_not_in_directory (404), sitewarden_filesystem_unavailable
	 *                        or sitewarden_install_failed (500), or an activation's error.
	 */
	public function install( $slug, $activate ) {
		Sitewarden_Connector_Admin_Apis::load();

		// A folder without a valid style.css exists too: the upgrader would not overwrite it either.
		$existing = wp_get_theme( $slug );
		if ( $existing->exists() ) {
			return $this->already_installed( $slug, (string) $existing->get( 'Version' ) );
		}

		$api = themes_api(
			'theme_information',
			array(
				'slug'   => $slug,
				'fields' => array(
					'sections' => false,
					'tags'     => false,
				),
			)
		);
		if ( is_wp_error( $api ) ) {
			// api.wordpress.org answers {"error": "Theme not found"} for an unknown slug; anything else is the directory failing.
			if ( false !== stripos( $api->get_error_message(), 'not found' ) ) {
				return new WP_Error(
					'sitewarden_theme_not_in_directory',
					sprintf( 'The theme directory has no theme with the slug %s.', $slug ),
					array( 'status' => 404 )
				);
			}
			return new WP_Error(
				'sitewarden_install_failed',
				sprintf( 'Installing %1$s failed: the theme directory did not answer (%2$s).', $slug, wp_strip_all_tags( $api->get_error_message() ) ),
				array( 'status' => 500 )
			);
		}
		if ( ! is_object( $api ) || empty( $api->download_link ) || ! is_string( $api->download_link ) ) {
			return new WP_Error(
				'sitewarden_install_failed',
				sprintf( 'Installing %s failed: the theme directory gave no download link.', $slug ),
				array( 'status' => 500 )
			);
		}

		$connected = $this->filesystem->connect( get_theme_root() );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}

		$download = $api->download_link;
		$upgrader = $this->runner->run(
			'Theme_Upgrader',
			$slug,
			static function ( $upgrader ) use ( $download ) {
				return $upgrader->install( $download );
			},
			'Installing'
		);
		if ( is_wp_error( $upgrader ) ) {
			$codes = (array) $upgrader->get_error_data();
			if ( isset( $codes['upgraderCodes'] ) && in_array( 'folder_exists', (array) $codes['upgraderCodes'], true ) ) {
				return $this->already_installed( $slug, null );
			}
			return 'sitewarden_update_failed' === $upgrader->get_error_code()
				? new WP_Error( 'sitewarden_install_failed', $upgrader->get_error_message(), $upgrader->get_error_data() )
				: $upgrader;
		}

		// The package's folder is the stylesheet (the directory's zips hold one folder named after the slug).
		$installed  = $upgrader->theme_info();
		$stylesheet = $installed ? $installed->get_stylesheet() : $slug;
		wp_get_theme( $stylesheet )->cache_delete();

		if ( $activate ) {
			$activated = $this->themes->activate( $stylesheet );
			if ( is_wp_error( $activated ) ) {
				// Installed all the same: the caller is told so.
				$activated->add_data( array_merge( (array) $activated->get_error_data(), array( 'installed' => true ) ) );
				return $activated;
			}
		}

		$theme = wp_get_theme( $stylesheet );
		return array(
			'stylesheet' => $stylesheet,
			'name'       => wp_strip_all_tags( (string) $theme->get( 'Name' ) ),
			'version'    => (string) $theme->get( 'Version' ),
			'active'     => get_stylesheet() === $stylesheet,
		);
	}

	/**
	 * @param string      $slug
	 * @param string|null $version The installed version, when WordPress can read it.
	 */
	private function already_installed( $slug, $version ) {
		return new WP_Error(
			'sitewarden_theme_installed',
			null === $version || '' === $version
				? sprintf( 'A folder named %s is already in the site\'s themes folder.', $slug )
				: sprintf( '%1$s %2$s is already installed.', $slug, $version ),
			array(
				'status'  => 409,
				'version' => $version,
			)
		);
	}
}
