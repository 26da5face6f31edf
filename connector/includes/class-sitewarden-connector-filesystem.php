<?php
/**
 * Write access to the site's files through WordPress's filesystem API.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * Connects WP_Filesystem without any form: a REST caller cannot answer WordPress's
 * FTP credentials prompt, so the site must either write directly or have its
 * FTP/SSH credentials in wp-config.php.
 */
final class Sitewarden_Connector_Filesystem {

	/**
	 * @param string $directory The directory about to be written to.
	 * @return true|WP_Error sitewarden_filesystem_unavailable when WordPress would have to ask for credentials.
	 */
	public function connect( $directory ) {
		Sitewarden_Connector_Admin_Apis::load();

		// Without usable credentials core prints its credentials form; nobody is there to read it.
		ob_start();
		$credentials = request_filesystem_credentials( '', '', false, $directory, null, false );
		ob_end_clean();

		if ( false === $credentials ) {
			$method = get_filesystem_method( array(), $directory );
			return new WP_Error(
				'sitewarden_filesystem_unavailable',
				sprintf(
					'WordPress cannot write to %1$s directly (filesystem method "%2$s") and has no FTP/SSH credentials to use instead. Make the files writable by the web server user, or define FS_METHOD and the FTP_HOST, FTP_USER and FTP_PASS constants in wp-config.php.',
					$directory,
					$method ? $method : 'none'
				),
				array( 'status' => 500 )
			);
		}

		if ( ! WP_Filesystem( $credentials, $directory ) ) {
			global $wp_filesystem;
			$reason = 'it could not connect';
			if ( is_object( $wp_filesystem ) && $wp_filesystem->errors->has_errors() ) {
				$reason = $wp_filesystem->errors->get_error_message();
			}
			return new WP_Error(
				'sitewarden_filesystem_unavailable',
				sprintf( 'WordPress cannot write to %1$s: %2$s', $directory, $reason ),
				array( 'status' => 500 )
			);
		}

		return true;
	}
}
