<?php
/**
 * Runs a core upgrader with nobody watching.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * Plugin_Upgrader and Theme_Upgrader talk to a "skin" meant for a browser. Core's
 * WP_Ajax_Upgrader_Skin is the quiet one (it collects feedback and errors instead of
 * printing them); on top of that, anything still echoed is discarded so it cannot
 * corrupt the JSON answer.
 */
final class Sitewarden_Connector_Upgrader_Runner {

	/**
	 * @param string $upgrader_class 'Plugin_Upgrader' or 'Theme_Upgrader'.
	 * @param string $target         Plugin file or theme stylesheet.
	 * @return WP_Upgrader|WP_Error The upgrader, for its result, after a successful upgrade.
	 */
	public function upgrade( $upgrader_class, $target ) {
		return $this->run(
			$upgrader_class,
			$target,
			static function ( $upgrader ) use ( $target ) {
				return $upgrader->upgrade( $target );
			}
		);
	}

	/**
	 * @param string   $upgrader_class Any WP_Upgrader.
	 * @param string   $target         What is upgraded, for the error message.
	 * @param callable $action         Given the upgrader; returns true, or (Core_Upgrader) the new version, on success.
	 * @param string   $verb           What is done, for the error message: 'Updating' or (since 1.8.0) 'Installing'.
	 * @return WP_Upgrader|WP_Error
	 */
	public function run( $upgrader_class, $target, callable $action, $verb = 'Updating' ) {
		Sitewarden_Connector_Admin_Apis::load();

		$skin     = new WP_Ajax_Upgrader_Skin();
		$upgrader = new $upgrader_class( $skin );

		$buffer_level = ob_get_level();
		ob_start();
		try {
			$result = $action( $upgrader );
		} finally {
			// Skins open buffers of their own and do not always close them on failure.
			while ( ob_get_level() > $buffer_level ) {
				ob_end_clean();
			}
		}

		if ( true === $result || ( is_string( $result ) && '' !== $result ) ) {
			return $upgrader;
		}
		return $this->failure( $target, $result, $skin, $verb );
	}

	/**
	 * @param string                $target
	 * @param false|null|WP_Error   $result What upgrade() returned.
	 * @param WP_Ajax_Upgrader_Skin $skin
	 * @param string                $verb
	 * @return WP_Error
	 */
	private function failure( $target, $result, $skin, $verb ) {
		$errors = new WP_Error();
		if ( is_wp_error( $result ) ) {
			$errors->merge_from( $result );
		}
		if ( $skin->get_errors()->has_errors() ) {
			$errors->merge_from( $skin->get_errors() );
		}

		$messages = array();
		foreach ( $errors->get_error_codes() as $error_code ) {
			// Core puts the detail ("Not Found", a file name) in the error data.
			$detail = $errors->get_error_data( $error_code );
			foreach ( $errors->get_error_messages( $error_code ) as $message ) {
				$messages[] = wp_strip_all_tags( is_string( $detail ) && '' !== $detail ? "$message $detail" : $message );
			}
		}
		$messages = array_values( array_unique( $messages ) );
		if ( ! $messages ) {
			$messages = array( 'The upgrader gave no reason.' );
		}
		// Not the skin's progress log: it names the package URL, which for commercial plugins can carry a licence key.
		$data = array(
			'status'        => 500,
			'upgraderCodes' => array_values( array_unique( array_map( 'strval', $errors->get_error_codes() ) ) ),
		);

		$filesystem_codes = array_filter(
			$data['upgraderCodes'],
			static function ( $code ) {
				// update_core() lists the core files it cannot overwrite as files_not_writable.
				return 0 === strpos( $code, 'fs_' ) || 'files_not_writable' === $code;
			}
		);
		$code = $filesystem_codes ? 'sitewarden_filesystem_unavailable' : 'sitewarden_update_failed';

		return new WP_Error( $code, sprintf( '%1$s %2$s failed: %3$s', $verb, $target, implode( ' ', $messages ) ), $data );
	}
}
