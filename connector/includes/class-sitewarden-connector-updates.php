<?php
/**
 * Which installed plugins and themes have a newer version on offer.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * Reads core's own update check results (the update_plugins and update_themes site
 * transients), so the answer is exactly what wp-admin would show, after letting core
 * re-check when its result is stale.
 */
final class Sitewarden_Connector_Updates {

	/**
	 * @param bool $refresh       Ask the update servers now instead of trusting the last check.
	 * @param bool $with_plugins  Whether the caller may see plugin updates.
	 * @param bool $with_themes   Whether the caller may see theme updates.
	 * @return array
	 */
	public function available( $refresh, $with_plugins, $with_themes ) {
		Sitewarden_Connector_Admin_Apis::load();

		$plugins     = array();
		$themes      = array();
		$checked_ats = array();

		if ( $with_plugins ) {
			if ( $refresh ) {
				$this->refresh_plugins();
			} else {
				$this->check_if_stale( 'wp_update_plugins' );
			}
			foreach ( array_keys( get_plugins() ) as $file ) {
				$offer = $this->plugin_offer( $file );
				if ( $offer ) {
					$plugins[ $file ] = $offer;
				}
			}
			$checked_ats[] = $this->last_checked( 'update_plugins' );
		}

		if ( $with_themes ) {
			if ( $refresh ) {
				$this->refresh_themes();
			} else {
				$this->check_if_stale( 'wp_update_themes' );
			}
			foreach ( array_keys( wp_get_themes() ) as $stylesheet ) {
				$offer = $this->theme_offer( (string) $stylesheet );
				if ( $offer ) {
					$themes[ $stylesheet ] = $offer;
				}
			}
			$checked_ats[] = $this->last_checked( 'update_themes' );
		}

		// Since 1.4.0, for the inventory: each plugin's `Requires Plugins` (WordPress 6.5+), the
		// core releases and language packs on offer.
		$requires = array();
		if ( $with_plugins ) {
			foreach ( get_plugins() as $file => $headers ) {
				$slugs = Sitewarden_Connector_Plugin_Status::requirements( $headers );
				if ( $slugs ) {
					$requires[ $file ] = $slugs;
				}
			}
		}

		$core = array();
		if ( current_user_can( 'update_core' ) ) {
			if ( $refresh ) {
				ob_start();
				wp_version_check( array(), true );
				ob_end_clean();
			} else {
				$this->check_if_stale( 'wp_version_check' );
			}
			foreach ( (array) Sitewarden_Connector_Core_Updates::offers( get_bloginfo( 'version' ) ) as $offer ) {
				$core[] = array( 'version' => (string) $offer->version );
			}
		}
		$translations = array();
		if ( current_user_can( 'update_languages' ) ) {
			foreach ( wp_get_translation_updates() as $pack ) {
				$translations[] = array(
					'type'     => (string) $pack->type,
					'slug'     => (string) $pack->slug,
					'language' => (string) $pack->language,
					'version'  => (string) $pack->version,
				);
			}
		}

		// The older of the two checks: everything reported is at least that fresh.
		$checked_at = in_array( null, $checked_ats, true ) || ! $checked_ats ? null : min( $checked_ats );

		return array(
			'checkedAt'    => null === $checked_at ? null : gmdate( 'Y-m-d\TH:i:s\Z', $checked_at ),
			// Objects, so that "nothing to update" is {} in JSON and not [].
			'plugins'      => (object) $plugins,
			'themes'       => (object) $themes,
			'requires'     => (object) $requires,
			'core'         => array_values( array_unique( $core, SORT_REGULAR ) ),
			'translations' => $translations,
		);
	}

	/**
	 * Since 1.5.0, for an update that named the version it expects: null when the site offers it (or
	 * any version, for ''), else the answer that refuses the update when the site offers another
	 * one, or none: nothing is changed. A 200 answer (as the plugin status refusals), so the caller
	 * reads what the site has and offers now in the same request.
	 *
	 * @param string      $item     Plugin file or theme stylesheet.
	 * @param string|null $version  The installed version, null when the item is not installed.
	 * @param array|null  $offer    { version, newVersion } offered now, or null.
	 * @param string      $expected The version the caller expected ('' for any).
	 * @return array|null { result: refused, code: sitewarden_offer_changed, message, version, offer }, or null.
	 */
	public static function refusal_unless_offered( $item, $version, $offer, $expected ) {
		if ( null !== $offer && ( '' === $expected || $offer['newVersion'] === $expected ) ) {
			return null;
		}
		return array(
			'result'  => 'refused',
			'code'    => 'sitewarden_offer_changed',
			'message' => null === $offer
				? sprintf( 'No update of %s is offered.', $item )
				: sprintf( '%1$s is offered at %2$s, not %3$s.', $item, $offer['newVersion'], $expected ),
			'version' => $version,
			'offer'   => null === $offer ? null : array(
				'version'    => $offer['version'],
				'newVersion' => $offer['newVersion'],
			),
		);
	}

	/**
	 * A plugin's offer as GET /updates reports it (core's check renewed only when stale), for an
	 * update that names the version it expects.
	 *
	 * @param string $file Plugin file.
	 * @return array|null As plugin_offer().
	 */
	public function current_plugin_offer( $file ) {
		Sitewarden_Connector_Admin_Apis::load();
		$this->check_if_stale( 'wp_update_plugins' );
		return $this->plugin_offer( $file );
	}

	/**
	 * @param string $stylesheet Theme directory name.
	 * @return array|null As theme_offer().
	 */
	public function current_theme_offer( $stylesheet ) {
		Sitewarden_Connector_Admin_Apis::load();
		$this->check_if_stale( 'wp_update_themes' );
		return $this->theme_offer( $stylesheet );
	}

	/**
	 * @param string $file Plugin file, e.g. akismet/akismet.php.
	 * @return array|null { slug, version, newVersion } when a newer version is known.
	 */
	public function plugin_offer( $file ) {
		$installed = get_plugins();
		$updates   = get_site_transient( 'update_plugins' );
		if ( ! isset( $installed[ $file ] ) || ! is_object( $updates ) || empty( $updates->response[ $file ] ) ) {
			return null;
		}

		$offer       = (object) $updates->response[ $file ];
		$version     = (string) $installed[ $file ]['Version'];
		$new_version = isset( $offer->new_version ) ? (string) $offer->new_version : '';
		// A stale check can still list a version that has since been installed.
		if ( '' === $new_version || ! version_compare( $new_version, $version, '>' ) ) {
			return null;
		}

		return array(
			'slug'       => isset( $offer->slug ) ? (string) $offer->slug : dirname( $file ),
			'version'    => $version,
			'newVersion' => $new_version,
		);
	}

	/**
	 * @param string $stylesheet Theme directory name.
	 * @return array|null { version, newVersion } when a newer version is known.
	 */
	public function theme_offer( $stylesheet ) {
		$theme   = wp_get_theme( $stylesheet );
		$updates = get_site_transient( 'update_themes' );
		if ( ! $theme->exists() || ! is_object( $updates ) || empty( $updates->response[ $stylesheet ] ) ) {
			return null;
		}

		$offer       = (array) $updates->response[ $stylesheet ];
		$version     = (string) $theme->get( 'Version' );
		$new_version = isset( $offer['new_version'] ) ? (string) $offer['new_version'] : '';
		if ( '' === $new_version || ! version_compare( $new_version, $version, '>' ) ) {
			return null;
		}

		return array(
			'version'    => $version,
			'newVersion' => $new_version,
		);
	}

	/**
	 * Core skips a check made within the last hours unless something changed;
	 * dropping its cached result makes this check real.
	 *
	 * @return bool Whether the update server answered.
	 */
	public function refresh_plugins() {
		Sitewarden_Connector_Admin_Apis::load();
		// Core reports an unreachable wordpress.org with trigger_error(), which may be displayed.
		ob_start();
		wp_clean_plugins_cache( true );
		wp_update_plugins();
		ob_end_clean();
		return null !== $this->last_checked( 'update_plugins' );
	}

	/**
	 * @return bool Whether the update server answered.
	 */
	public function refresh_themes() {
		ob_start();
		wp_clean_themes_cache( true );
		wp_update_themes();
		ob_end_clean();
		return null !== $this->last_checked( 'update_themes' );
	}

	/**
	 * Core's own check asks the update server only when its last answer is older than
	 * twelve hours or the installed versions changed since, as on a wp-admin page load;
	 * otherwise it returns at once. Sites with WP-Cron off would never check without it.
	 *
	 * @param callable $check wp_update_plugins or wp_update_themes.
	 */
	private function check_if_stale( $check ) {
		ob_start();
		call_user_func( $check );
		ob_end_clean();
	}

	/**
	 * @param string $transient 'update_plugins' or 'update_themes'.
	 * @return int|null Unix time of core's last answered update check.
	 */
	private function last_checked( $transient ) {
		$updates = get_site_transient( $transient );
		// Core stamps last_checked before asking; only an answer brings the response list.
		if ( ! is_object( $updates ) || ! isset( $updates->response ) || empty( $updates->last_checked ) ) {
			return null;
		}
		return (int) $updates->last_checked;
	}
}
