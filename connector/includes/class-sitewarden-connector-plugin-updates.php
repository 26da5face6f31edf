<?php
/**
 * Updating one plugin to the newest version WordPress knows of.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

final class Sitewarden_Connector_Plugin_Updates {

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
	 * @param string $file Plugin file, e.g. akismet/akismet.php.
	 * @return array|WP_Error { plugin, previousVersion, version, active }
	 */
	public function update( $file ) {
		Sitewarden_Connector_Admin_Apis::load();

		$installed = get_plugins();
		if ( ! isset( $installed[ $file ] ) ) {
			return new WP_Error( 'sitewarden_plugin_not_found', sprintf( 'No plugin %s is installed.', $file ), array( 'status' => 404 ) );
		}
		$previous_version = (string) $installed[ $file ]['Version'];

		$offer = $this->updates->plugin_offer( $file );
		if ( null === $offer ) {
			if ( ! $this->updates->refresh_plugins() ) {
				return new WP_Error(
					'sitewarden_update_failed',
					sprintf( 'Could not find out whether %s has an update: the update server did not answer.', $file ),
					array( 'status' => 500 )
				);
			}
			$offer = $this->updates->plugin_offer( $file );
		}
		if ( null === $offer ) {
			return new WP_Error(
				'sitewarden_no_update',
				sprintf( '%1$s is at version %2$s and no newer version is known.', $file, $previous_version ),
				array(
					'status'  => 409,
					'version' => $previous_version,
				)
			);
		}

		$connected = $this->filesystem->connect( WP_PLUGIN_DIR );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}

		$activation = $this->activation_state( $file );

		$upgrader = $this->runner->upgrade( 'Plugin_Upgrader', $file );
		if ( is_wp_error( $upgrader ) ) {
			// A failed upgrade may already have deactivated the plugin (its old files can still be there).
			$this->restore_activation( $file, $activation );
			return $upgrader;
		}

		// The package may have brought its main code under another file name.
		$new_file = $upgrader->plugin_info();
		if ( ! $new_file ) {
			$new_file = $file;
		}
		$this->restore_activation( $new_file, $activation );

		wp_clean_plugins_cache( false );
		$data = get_plugin_data( WP_PLUGIN_DIR . '/' . $new_file, false, false );

		return array(
			'plugin'          => $new_file,
			'previousVersion' => $previous_version,
			'version'         => (string) $data['Version'],
			'active'          => is_plugin_active( $new_file ),
		);
	}

	/**
	 * Since 1.5.0: one request where a bulk update made two (the offers, then the update). Updates
	 * only when the site offers `$expected` ('' for whatever it offers), the offer read as GET
	 * /updates reads it; else refused (Sitewarden_Connector_Updates::refusal_unless_offered). The answer also
	 * carries what the caller's inventory needs after it: the plugin's offer left (WordPress's
	 * upgrader clears its update check, so normally none) and its `Requires Plugins`.
	 *
	 * @param string $file     Plugin file.
	 * @param string $expected The version expected to be offered, or ''.
	 * @return array|WP_Error { result: updated, plugin, previousVersion, version, active, offer, requires } or a refusal.
	 */
	public function update_expecting( $file, $expected ) {
		Sitewarden_Connector_Admin_Apis::load();

		$installed = get_plugins();
		$version   = isset( $installed[ $file ] ) ? (string) $installed[ $file ]['Version'] : null;
		$offer     = null === $version ? null : $this->updates->current_plugin_offer( $file );
		$refusal   = Sitewarden_Connector_Updates::refusal_unless_offered( $file, $version, $offer, $expected );
		if ( null !== $refusal ) {
			return $refusal;
		}

		$updated = $this->update( $file );
		if ( is_wp_error( $updated ) ) {
			return $updated;
		}
		$now = get_plugins();
		return array_merge(
			array( 'result' => 'updated' ),
			$updated,
			array(
				'offer'    => $this->updates->plugin_offer( $updated['plugin'] ),
				'requires' => isset( $now[ $updated['plugin'] ] ) ? Sitewarden_Connector_Plugin_Status::requirements( $now[ $updated['plugin'] ] ) : array(),
			)
		);
	}

	/**
	 * @param string $file
	 * @return array { site: bool, network: bool }
	 */
	private function activation_state( $file ) {
		return array(
			'site'    => in_array( $file, (array) get_option( 'active_plugins', array() ), true ),
			'network' => is_multisite() && is_plugin_active_for_network( $file ),
		);
	}

	/**
	 * Plugin_Upgrader::upgrade() silently deactivates an active plugin before replacing
	 * it (outside cron) and leaves reactivation to a separate browser request that wp-admin
	 * opens in an iframe. Nobody opens that iframe here, so the connector reactivates,
	 * silently as well: activation hooks did not run for the deactivation either.
	 *
	 * @param string $file
	 * @param array  $was_active As returned by activation_state().
	 */
	private function restore_activation( $file, array $was_active ) {
		if ( ! file_exists( WP_PLUGIN_DIR . '/' . $file ) ) {
			return;
		}
		$now_active = $this->activation_state( $file );
		// Output (a notice from the plugin's code, say) must not reach the JSON answer.
		ob_start();
		if ( $was_active['network'] && ! $now_active['network'] ) {
			activate_plugin( $file, '', true, true );
		}
		if ( $was_active['site'] && ! $now_active['site'] ) {
			activate_plugin( $file, '', false, true );
		}
		ob_end_clean();
	}
}
