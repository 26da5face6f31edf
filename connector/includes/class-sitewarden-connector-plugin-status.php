<?php
/**
 * Activating, deactivating and deleting plugins under WordPress's plugin dependency rules.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * WordPress 6.5 reads a `Requires Plugins` header but enforces it only in wp-admin's
 * screens: its REST API lets anyone deactivate or delete a plugin an active plugin
 * needs. Here the rule is checked and the action taken in the same PHP request, so no
 * other request can change the answer in between. On WordPress before 6.5 the header
 * means nothing to WordPress and nothing is enforced.
 *
 * A refusal is an answer, not an error: { result: 'refused', reason, slugs }.
 */
final class Sitewarden_Connector_Plugin_Status {

	/** @var Sitewarden_Connector_Filesystem */
	private $filesystem;

	public function __construct( Sitewarden_Connector_Filesystem $filesystem ) {
		$this->filesystem = $filesystem;
	}

	/**
	 * @param string $file Plugin file, e.g. akismet/akismet.php.
	 * @return array|WP_Error
	 */
	public function activate( $file ) {
		$plugins = $this->installed( $file );
		if ( is_wp_error( $plugins ) ) {
			return $plugins;
		}
		$missing = array();
		foreach ( self::requirements( $plugins[ $file ] ) as $slug ) {
			$required = $this->file_of( $slug, $plugins );
			if ( null === $required || ! is_plugin_active( $required ) ) {
				$missing[] = $slug;
			}
		}
		if ( $missing ) {
			return $this->refused( 'dependencies-unmet', $missing );
		}
		if ( ! is_plugin_active( $file ) ) {
			// A plugin's activation output must not reach the JSON answer.
			ob_start();
			$result = activate_plugin( $file );
			ob_end_clean();
			if ( is_wp_error( $result ) ) {
				return new WP_Error(
					'sitewarden_activation_failed',
					sprintf( 'WordPress did not activate %1$s: %2$s', $file, wp_strip_all_tags( $result->get_error_message() ) ),
					array( 'status' => 500 )
				);
			}
		}
		return $this->done( $file );
	}

	/**
	 * @param string $file
	 * @param bool   $force Deactivate even when active plugins require it.
	 * @return array|WP_Error
	 */
	public function deactivate( $file, $force ) {
		$plugins = $this->installed( $file );
		if ( is_wp_error( $plugins ) ) {
			return $plugins;
		}
		$dependents = $this->active_dependents( $file, $plugins );
		if ( $dependents && ! $force ) {
			return $this->refused( 'required-by', $dependents );
		}
		if ( is_plugin_active( $file ) ) {
			ob_start();
			deactivate_plugins( $file );
			ob_end_clean();
		}
		return $this->done( $file );
	}

	/**
	 * @param string $file
	 * @param bool   $force Delete even when active plugins require it.
	 * @return array|WP_Error
	 */
	public function delete( $file, $force ) {
		$plugins = $this->installed( $file );
		if ( is_wp_error( $plugins ) ) {
			return $plugins;
		}
		if ( is_plugin_active( $file ) || is_plugin_active_for_network( $file ) ) {
			return new WP_Error( 'sitewarden_plugin_active', sprintf( '%s is active; deactivate it before deleting it.', $file ), array( 'status' => 409 ) );
		}
		$dependents = $this->active_dependents( $file, $plugins );
		if ( $dependents && ! $force ) {
			return $this->refused( 'required-by', $dependents );
		}
		$connected = $this->filesystem->connect( WP_PLUGIN_DIR );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}
		ob_start();
		$deleted = delete_plugins( array( $file ) );
		ob_end_clean();
		if ( true !== $deleted ) {
			$reason = is_wp_error( $deleted ) ? $deleted->get_error_message() : 'WordPress gave no reason.';
			return new WP_Error( 'sitewarden_delete_failed', sprintf( 'Deleting %1$s failed: %2$s', $file, wp_strip_all_tags( $reason ) ), array( 'status' => 500 ) );
		}
		return array(
			'result' => 'done',
			'plugin' => $file,
			'status' => 'deleted',
		);
	}

	/**
	 * @return array|WP_Error get_plugins(), fresh, when $file is one of them.
	 */
	private function installed( $file ) {
		Sitewarden_Connector_Admin_Apis::load();
		wp_clean_plugins_cache( false );
		$plugins = get_plugins();
		if ( ! isset( $plugins[ $file ] ) ) {
			return new WP_Error( 'sitewarden_plugin_not_found', sprintf( 'No plugin %s is installed.', $file ), array( 'status' => 404 ) );
		}
		return $plugins;
	}

	/**
	 * The slugs a plugin's `Requires Plugins` header names, cleaned as WordPress 6.5 cleans them
	 * (WP_Plugin_Dependencies::sanitize_dependency_slugs); none before 6.5.
	 *
	 * @param array $headers One entry of get_plugins().
	 * @return string[]
	 */
	public static function requirements( array $headers ) {
		if ( ! class_exists( 'WP_Plugin_Dependencies' ) || empty( $headers['RequiresPlugins'] ) ) {
			return array();
		}
		$slugs = array();
		foreach ( explode( ',', (string) $headers['RequiresPlugins'] ) as $slug ) {
			$slug = trim( $slug );
			if ( 1 === preg_match( '/^[a-z0-9]+(-[a-z0-9]+)*$/', $slug ) ) {
				$slugs[] = $slug;
			}
		}
		$slugs = array_values( array_unique( $slugs ) );
		sort( $slugs );
		return $slugs;
	}

	/**
	 * @return string[] Slugs of the active plugins whose header names $file's slug.
	 */
	private function active_dependents( $file, array $plugins ) {
		$slug       = self::slug_of( $file );
		$dependents = array();
		foreach ( $plugins as $other => $headers ) {
			if ( $other !== $file && is_plugin_active( $other ) && in_array( $slug, self::requirements( $headers ), true ) ) {
				$dependents[] = self::slug_of( $other );
			}
		}
		sort( $dependents );
		return $dependents;
	}

	/**
	 * WordPress's own mapping (WP_Plugin_Dependencies::convert_to_slug).
	 *
	 * @param string $file
	 * @return string
	 */
	private static function slug_of( $file ) {
		if ( 'hello.php' === $file ) {
			return 'hello-dolly';
		}
		return false !== strpos( $file, '/' ) ? dirname( $file ) : basename( $file, '.php' );
	}

	/**
	 * @return string|null The installed plugin file with that slug.
	 */
	private function file_of( $slug, array $plugins ) {
		foreach ( array_keys( $plugins ) as $file ) {
			if ( self::slug_of( $file ) === $slug ) {
				return $file;
			}
		}
		return null;
	}

	private function done( $file ) {
		return array(
			'result' => 'done',
			'plugin' => $file,
			'status' => is_plugin_active_for_network( $file ) ? 'network-active' : ( is_plugin_active( $file ) ? 'active' : 'inactive' ),
		);
	}

	private function refused( $reason, array $slugs ) {
		return array(
			'result' => 'refused',
			'reason' => $reason,
			'slugs'  => array_values( $slugs ),
		);
	}
}
