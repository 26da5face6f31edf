<?php
/**
 * One-click sign-in to wp-admin from Sitewarden: the daemon asks for a link over the REST API (as
 * the application password's user), the browser opens it once within a minute, and WordPress sets
 * that user's login cookie. Only a hash of each link's token is kept, in a transient.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

final class Sitewarden_Connector_Admin_Login {

	/** The query parameter of wp-login.php that carries the token. */
	const PARAMETER = 'sitewarden_login';

	/** How long a link may wait to be opened. */
	const LIFETIME_SECONDS = 60;

	/** Transient names: this prefix and the first 32 hex digits of the token's SHA-256. */
	const TRANSIENT_PREFIX = 'sitewarden_login_';

	/** 32 random bytes as hex. */
	const TOKEN_PATTERN = '/^[0-9a-f]{64}$/D';

	/**
	 * A single-use link that signs the calling user in to wp-admin.
	 *
	 * @return array|WP_Error { url, expiresAt }
	 */
	public function mint() {
		$user_id = get_current_user_id();
		/**
		 * Lets a site turn one-click sign-in off for itself, whatever the daemon allows.
		 *
		 * @param bool $enabled Whether the user may be given a link.
		 * @param int  $user_id The user the link would sign in.
		 */
		if ( ! $user_id || ! apply_filters( 'sitewarden_connector_admin_login_enabled', true, $user_id ) ) {
			return new WP_Error( 'sitewarden_admin_login_disabled', 'One-click sign-in is turned off on this site.', array( 'status' => 403 ) );
		}
		$token   = bin2hex( random_bytes( 32 ) );
		$hash    = hash( 'sha256', $token );
		$expires = time() + self::LIFETIME_SECONDS;
		$stored  = set_transient(
			self::transient( $hash ),
			array(
				'hash'    => $hash,
				'user'    => $user_id,
				'expires' => $expires,
			),
			self::LIFETIME_SECONDS
		);
		if ( ! $stored ) {
			return new WP_Error( 'sitewarden_admin_login_unavailable', 'Could not store the sign-in link.', array( 'status' => 500 ) );
		}
		return array(
			'url'       => add_query_arg( self::PARAMETER, $token, wp_login_url() ),
			'expiresAt' => gmdate( 'Y-m-d\TH:i:s\Z', $expires ),
		);
	}

	/**
	 * On wp-login.php (login_init): a link's token signs its user in and goes on to wp-admin; an
	 * unknown, used or expired one leaves WordPress's login form, with an error above it.
	 */
	public static function consume_from_request() {
		if ( ! isset( $_GET[ self::PARAMETER ] ) ) { // phpcs:ignore WordPress.Security.NonceVerification -- the token is the proof.
			return;
		}
		$token   = is_string( $_GET[ self::PARAMETER ] ) ? wp_unslash( $_GET[ self::PARAMETER ] ) : ''; // phpcs:ignore WordPress.Security
		$user_id = self::consume( $token );
		if ( ! $user_id ) {
			add_filter( 'wp_login_errors', array( __CLASS__, 'explain_refusal' ) );
			return;
		}
		$user = get_userdata( $user_id );
		wp_set_current_user( $user_id );
		wp_set_auth_cookie( $user_id );
		/** As after a password sign-in, so the site's own login records see it. */
		do_action( 'wp_login', $user->user_login, $user );
		wp_safe_redirect( admin_url() );
		exit;
	}

	/**
	 * The user a token signs in, once: its record is deleted before anything is checked, and only
	 * the request whose deletion took it uses it.
	 *
	 * @param string $token
	 * @return int The user id, or 0.
	 */
	private static function consume( $token ) {
		if ( ! preg_match( self::TOKEN_PATTERN, $token ) ) {
			return 0;
		}
		$hash      = hash( 'sha256', $token );
		$transient = self::transient( $hash );
		$record    = get_transient( $transient );
		if ( ! delete_transient( $transient ) || ! is_array( $record ) ) {
			return 0;
		}
		$valid = isset( $record['hash'], $record['user'], $record['expires'] )
			&& hash_equals( (string) $record['hash'], $hash )
			&& (int) $record['expires'] >= time()
			&& false !== get_userdata( (int) $record['user'] );
		return $valid ? (int) $record['user'] : 0;
	}

	/**
	 * @param WP_Error $errors The login form's errors.
	 * @return WP_Error
	 */
	public static function explain_refusal( $errors ) {
		$errors = is_wp_error( $errors ) ? $errors : new WP_Error();
		$errors->add( 'sitewarden_login_refused', 'This sign-in link from Sitewarden is unknown, already used or expired. Ask Sitewarden for a new one, or sign in with your password.' );
		return $errors;
	}

	private static function transient( $hash ) {
		return self::TRANSIENT_PREFIX . substr( $hash, 0, 32 );
	}
}
