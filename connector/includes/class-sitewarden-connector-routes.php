<?php
/**
 * The sitewarden/v1 REST routes: who may call what, with which arguments.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * Authentication is WordPress core's (application passwords over Basic auth); each
 * route only asks whether the authenticated user holds the capability core itself
 * requires for the same action in wp-admin.
 */
final class Sitewarden_Connector_Routes {

	const ROUTE_NAMESPACE = 'sitewarden/v1';

	/** Directory and file names only: nothing that could climb out of wp-content. */
	const NAME = '[A-Za-z0-9._-]+';

	public static function register() {
		$filesystem     = new Sitewarden_Connector_Filesystem();
		$runner         = new Sitewarden_Connector_Upgrader_Runner();
		$updates        = new Sitewarden_Connector_Updates();
		$info           = new Sitewarden_Connector_Info();
		$plugin_updates = new Sitewarden_Connector_Plugin_Updates( $updates, $filesystem, $runner );
		$theme_updates  = new Sitewarden_Connector_Theme_Updates( $updates, $filesystem, $runner );
		$themes         = new Sitewarden_Connector_Themes( $filesystem );
		$theme_install  = new Sitewarden_Connector_Theme_Install( $filesystem, $runner, $themes );
		$plugin_status  = new Sitewarden_Connector_Plugin_Status( $filesystem );
		$core_updates   = new Sitewarden_Connector_Core_Updates( $filesystem, $runner );
		$translations   = new Sitewarden_Connector_Translation_Updates( $filesystem, $runner );
		$admin_login    = new Sitewarden_Connector_Admin_Login();

		Sitewarden_Connector_Backup_Routes::register( self::ROUTE_NAMESPACE, $filesystem );
		self::register_rollback( new Sitewarden_Connector_Rollback() );

		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/info',
			array(
				'methods'             => WP_REST_Server::READABLE,
				'permission_callback' => self::requires( 'activate_plugins' ),
				'callback'            => static function () use ( $info ) {
					return rest_ensure_response( $info->describe() );
				},
			)
		);

		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/updates',
			array(
				'methods'             => WP_REST_Server::READABLE,
				'permission_callback' => static function () {
					return current_user_can( 'update_plugins' ) || current_user_can( 'update_themes' );
				},
				'args'                => array(
					'refresh' => array(
						'description' => 'Ask the update servers now instead of using the last check.',
						'type'        => 'boolean',
						'default'     => false,
					),
				),
				'callback'            => static function ( WP_REST_Request $request ) use ( $updates ) {
					return rest_ensure_response(
						$updates->available( (bool) $request['refresh'], current_user_can( 'update_plugins' ), current_user_can( 'update_themes' ) )
					);
				},
			)
		);

		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/plugins/update',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => self::requires( 'update_plugins' ),
				'args'                => array(
					'plugin'          => self::plugin_file_arg(),
					'expectedVersion' => self::expected_version_arg(),
				),
				'callback'            => static function ( WP_REST_Request $request ) use ( $plugin_updates ) {
					if ( $request->has_param( 'expectedVersion' ) ) {
						return rest_ensure_response( $plugin_updates->update_expecting( $request['plugin'], (string) $request['expectedVersion'] ) );
					}
					return rest_ensure_response( $plugin_updates->update( $request['plugin'] ) );
				},
			)
		);

		// Per-plugin meta capabilities, as wp-admin checks them (a plugin can be locked by a role filter).
		foreach ( array( 'activate', 'deactivate', 'delete' ) as $action ) {
			register_rest_route(
				self::ROUTE_NAMESPACE,
				'/plugins/' . $action,
				array(
					'methods'             => WP_REST_Server::CREATABLE,
					'permission_callback' => static function ( WP_REST_Request $request ) use ( $action ) {
						return 'delete' === $action ? current_user_can( 'delete_plugins' ) : current_user_can( $action . '_plugin', $request['plugin'] );
					},
					'args'                => array(
						'plugin' => self::plugin_file_arg(),
						'force'  => array(
							'description' => 'Deactivate or delete even when active plugins require it.',
							'type'        => 'boolean',
							'default'     => false,
						),
					),
					'callback'            => static function ( WP_REST_Request $request ) use ( $plugin_status, $action ) {
						if ( 'activate' === $action ) {
							return rest_ensure_response( $plugin_status->activate( $request['plugin'] ) );
						}
						return rest_ensure_response( $plugin_status->$action( $request['plugin'], (bool) $request['force'] ) );
					},
				)
			);
		}

		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/core/update',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => self::requires( 'update_core' ),
				'args'                => array(
					'version' => array(
						'description' => 'A version WordPress offers, e.g. 6.5.5; empty for the newest offered.',
						'type'        => 'string',
						'default'     => '',
						'pattern'     => '^(\\d{1,4}(\\.\\d{1,4}){1,3}(-[A-Za-z0-9.]{1,20})?)?$',
					),
				),
				'callback'            => static function ( WP_REST_Request $request ) use ( $core_updates ) {
					return rest_ensure_response( $core_updates->update( (string) $request['version'] ) );
				},
			)
		);

		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/translations/update',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => self::requires( 'update_languages' ),
				'callback'            => static function () use ( $translations ) {
					return rest_ensure_response( $translations->update() );
				},
			)
		);

		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/themes/update',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => self::requires( 'update_themes' ),
				'args'                => array(
					'stylesheet'      => self::stylesheet_arg(),
					'expectedVersion' => self::expected_version_arg(),
				),
				'callback'            => static function ( WP_REST_Request $request ) use ( $theme_updates ) {
					if ( $request->has_param( 'expectedVersion' ) ) {
						return rest_ensure_response( $theme_updates->update_expecting( $request['stylesheet'], (string) $request['expectedVersion'] ) );
					}
					return rest_ensure_response( $theme_updates->update( $request['stylesheet'] ) );
				},
			)
		);

		// Since 1.8.0: WordPress's REST API installs plugins but not themes.
		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/themes/install',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => static function ( WP_REST_Request $request ) {
					return current_user_can( 'install_themes' ) && ( ! $request['activate'] || current_user_can( 'switch_themes' ) );
				},
				'args'                => array(
					'slug'     => array(
						'description'       => 'The theme\'s slug in the theme directory, e.g. twentytwentyfour.',
						'type'              => 'string',
						'required'          => true,
						'validate_callback' => static function ( $value, $request, $param ) {
							return self::validate_name( $value, $request, $param, '#^[a-z0-9][a-z0-9._-]*$#D', 'a theme slug such as twentytwentyfour (lowercase letters, digits, dots, dashes, underscores)' );
						},
					),
					'activate' => array(
						'description' => 'Switch the site to the theme once installed (needs switch_themes too).',
						'type'        => 'boolean',
						'default'     => false,
					),
				),
				'callback'            => static function ( WP_REST_Request $request ) use ( $theme_install ) {
					return rest_ensure_response( $theme_install->install( $request['slug'], (bool) $request['activate'] ) );
				},
			)
		);

		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/themes/activate',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => self::requires( 'switch_themes' ),
				'args'                => array( 'stylesheet' => self::stylesheet_arg() ),
				'callback'            => static function ( WP_REST_Request $request ) use ( $themes ) {
					return rest_ensure_response( $themes->activate( $request['stylesheet'] ) );
				},
			)
		);

		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/themes/delete',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => self::requires( 'delete_themes' ),
				'args'                => array( 'stylesheet' => self::stylesheet_arg() ),
				'callback'            => static function ( WP_REST_Request $request ) use ( $themes ) {
					return rest_ensure_response( $themes->delete( $request['stylesheet'] ) );
				},
			)
		);

		// A link that signs the calling user in to wp-admin once: an administrator only, as for backups.
		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/admin-login',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => self::requires( 'manage_options' ),
				'callback'            => static function () use ( $admin_login ) {
					return rest_ensure_response( $admin_login->mint() );
				},
			)
		);
	}

	/**
	 * Restore points for safe updates and the standalone rollback path's secret: an administrator
	 * only, as for backups.
	 */
	private static function register_rollback( Sitewarden_Connector_Rollback $rollback ) {
		$administrator = array( __CLASS__, 'is_administrator' );
		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/rollback/secret',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => $administrator,
				'args'                => array(
					'hash' => array(
						'description' => 'SHA-256 (hex) of the standalone rollback path secret.',
						'type'        => 'string',
						'required'    => true,
						'pattern'     => '^[0-9a-f]{64}$',
					),
				),
				'callback'            => static function ( WP_REST_Request $request ) use ( $rollback ) {
					return rest_ensure_response( $rollback->provision_secret( $request['hash'] ) );
				},
			)
		);
		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/rollback/save',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => $administrator,
				'args'                => array(
					'type'   => array(
						'type'     => 'string',
						'required' => true,
						'enum'     => array( 'plugin', 'theme', 'core' ),
					),
					'target' => array(
						'description'       => 'Plugin file or theme stylesheet (for core: core).',
						'type'              => 'string',
						'required'          => true,
						'validate_callback' => static function ( $value, $request, $param ) {
							return self::validate_name( $value, $request, $param, '#^' . self::NAME . '(?:/' . self::NAME . ')?$#D', 'a plugin file or a theme directory name' );
						},
					),
				),
				'callback'            => static function ( WP_REST_Request $request ) use ( $rollback ) {
					return rest_ensure_response( $rollback->save( $request['type'], $request['target'] ) );
				},
			)
		);
		register_rest_route(
			self::ROUTE_NAMESPACE,
			'/rollback/discard',
			array(
				'methods'             => WP_REST_Server::CREATABLE,
				'permission_callback' => $administrator,
				'args'                => array(
					'id' => array(
						'type'     => 'string',
						'required' => true,
						'pattern'  => '^[0-9]{14}-[0-9a-f]{8}$',
					),
				),
				'callback'            => static function ( WP_REST_Request $request ) use ( $rollback ) {
					return rest_ensure_response( $rollback->discard( $request['id'] ) );
				},
			)
		);
	}

	/**
	 * The one administrator check (backups, restores, restore points, the rollback secret): routes
	 * that read or replace every file and table, secrets included, need manage_options and install_plugins.
	 *
	 * @return bool
	 */
	public static function is_administrator() {
		return current_user_can( 'manage_options' ) && current_user_can( 'install_plugins' );
	}

	/**
	 * A false answer becomes core's rest_forbidden error: 401 when nobody is
	 * logged in, 403 when the user lacks the capability.
	 *
	 * @param string $capability
	 * @return callable
	 */
	private static function requires( $capability ) {
		return static function () use ( $capability ) {
			return current_user_can( $capability );
		};
	}

	private static function plugin_file_arg() {
		return array(
			'description'       => 'Plugin file relative to the plugins directory, e.g. akismet/akismet.php.',
			'type'              => 'string',
			'required'          => true,
			'validate_callback' => static function ( $value, $request, $param ) {
				return self::validate_name( $value, $request, $param, '#^' . self::NAME . '(?:/' . self::NAME . ')?$#D', 'a plugin file such as akismet/akismet.php' );
			},
		);
	}

	/** Since 1.5.0: the update is made only when this version is offered ('' for any offered version). */
	private static function expected_version_arg() {
		return array(
			'description' => 'Update only when the site offers this version (empty: any offered version); otherwise answer result "refused", code sitewarden_offer_changed.',
			'type'        => 'string',
			'maxLength'   => 200,
		);
	}

	private static function stylesheet_arg() {
		return array(
			'description'       => 'Theme directory name (its stylesheet), e.g. twentytwentythree.',
			'type'              => 'string',
			'required'          => true,
			'validate_callback' => static function ( $value, $request, $param ) {
				return self::validate_name( $value, $request, $param, '#^' . self::NAME . '$#D', 'a theme directory name such as twentytwentythree' );
			},
		);
	}

	/**
	 * @return true|WP_Error Core turns an error into a 400 rest_invalid_param answer.
	 */
	private static function validate_name( $value, $request, $param, $pattern, $expected ) {
		$valid = rest_validate_request_arg( $value, $request, $param );
		if ( is_wp_error( $valid ) ) {
			return $valid;
		}
		$segments_ok = ! in_array( '.', explode( '/', $value ), true ) && false === strpos( $value, '..' );
		if ( strlen( $value ) > 200 || ! $segments_ok || ! preg_match( $pattern, $value ) ) {
			return new WP_Error( 'rest_invalid_param', sprintf( '%1$s must be %2$s.', $param, $expected ), array( 'status' => 400 ) );
		}
		return true;
	}
}
