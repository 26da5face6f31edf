<?php
/**
 * Switching to an installed theme and deleting one.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

final class Sitewarden_Connector_Themes {

	/** @var Sitewarden_Connector_Filesystem */
	private $filesystem;

	public function __construct( Sitewarden_Connector_Filesystem $filesystem ) {
		$this->filesystem = $filesystem;
	}

	/**
	 * @param string $stylesheet Theme directory name.
	 * @return array|WP_Error { stylesheet, active, previous }
	 */
	public function activate( $stylesheet ) {
		$theme = wp_get_theme( $stylesheet );
		if ( ! $theme->exists() ) {
			return $this->not_found( $stylesheet );
		}
		if ( $theme->errors() ) {
			return $this->broken( $stylesheet, $theme->errors()->get_error_message() );
		}

		$previous = get_stylesheet();
		if ( $previous === $stylesheet ) {
			return array(
				'stylesheet' => $stylesheet,
				'active'     => true,
				'previous'   => $previous,
			);
		}

		// switch_theme() would wp_die() on unmet requirements; say why instead.
		$requirements = validate_theme_requirements( $stylesheet );
		if ( is_wp_error( $requirements ) ) {
			return $this->broken( $stylesheet, $requirements->get_error_message() );
		}

		switch_theme( $stylesheet );

		return array(
			'stylesheet' => $stylesheet,
			'active'     => get_stylesheet() === $stylesheet,
			'previous'   => $previous,
		);
	}

	/**
	 * @param string $stylesheet Theme directory name.
	 * @return array|WP_Error { stylesheet, deleted }
	 */
	public function delete( $stylesheet ) {
		Sitewarden_Connector_Admin_Apis::load();

		$theme = wp_get_theme( $stylesheet );
		if ( ! $theme->exists() ) {
			return $this->not_found( $stylesheet );
		}
		// Deleting the parent would break the active child theme just as surely.
		if ( get_stylesheet() === $stylesheet || get_template() === $stylesheet ) {
			return new WP_Error(
				'sitewarden_theme_active',
				get_stylesheet() === $stylesheet
					? sprintf( '%s is the active theme; activate another theme before deleting it.', $stylesheet )
					: sprintf( '%1$s is the parent of the active theme %2$s; activate another theme before deleting it.', $stylesheet, get_stylesheet() ),
				array( 'status' => 409 )
			);
		}

		$connected = $this->filesystem->connect( get_theme_root( $stylesheet ) );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}

		ob_start();
		$deleted = delete_theme( $stylesheet );
		ob_end_clean();

		if ( true !== $deleted ) {
			$reason = is_wp_error( $deleted ) ? $deleted->get_error_message() : 'WordPress gave no reason.';
			return new WP_Error(
				'sitewarden_delete_failed',
				sprintf( 'Deleting %1$s failed: %2$s', $stylesheet, $reason ),
				array( 'status' => 500 )
			);
		}

		return array(
			'stylesheet' => $stylesheet,
			'deleted'    => true,
		);
	}

	private function not_found( $stylesheet ) {
		return new WP_Error( 'sitewarden_theme_not_found', sprintf( 'No theme %s is installed.', $stylesheet ), array( 'status' => 404 ) );
	}

	private function broken( $stylesheet, $reason ) {
		return new WP_Error(
			'sitewarden_theme_broken',
			sprintf( '%1$s cannot be activated: %2$s', $stylesheet, $reason ),
			array( 'status' => 409 )
		);
	}
}
