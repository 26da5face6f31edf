<?php
/**
 * The sitewarden/v1 backup/... and restore/... REST routes.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * Backups read every file and table (secrets included) and restores replace them, so
 * both need an administrator (Sitewarden_Connector_Routes::is_administrator()).
 */
final class Sitewarden_Connector_Backup_Routes {

	public static function register( $route_namespace, Sitewarden_Connector_Filesystem $filesystem ) {
		$paths    = new Sitewarden_Connector_Backup_Paths();
		$files    = new Sitewarden_Connector_Backup_Files( $paths );
		$database = new Sitewarden_Connector_Backup_Database();
		$restore  = new Sitewarden_Connector_Restore(
			new Sitewarden_Connector_Restore_Staging( $paths ),
			new Sitewarden_Connector_Restore_Database( $database ),
			$filesystem
		);

		$routes = array(
			'backup/files'   => array(
				'GET, POST',
				array(
					'cursor' => array( 'type' => 'string', 'default' => '' ),
					'limit'  => array( 'type' => 'integer', 'default' => 1000, 'minimum' => 1, 'maximum' => 5000 ),
					'known'  => array( 'type' => 'array', 'default' => array(), 'maxItems' => 10000 ),
				),
				static function ( WP_REST_Request $request ) use ( $files ) {
					return $files->page( $request['cursor'], $request['limit'], $request['known'] );
				},
			),
			'backup/file'    => array(
				'GET',
				array(
					'path'   => array( 'type' => 'string', 'required' => true ),
					'offset' => array( 'type' => 'integer', 'default' => 0, 'minimum' => 0 ),
					'length' => array( 'type' => 'integer', 'default' => Sitewarden_Connector_Backup_Files::MAX_RANGE, 'minimum' => 0 ),
				),
				static function ( WP_REST_Request $request ) use ( $files ) {
					return $files->send( $request['path'], $request['offset'], $request['length'] );
				},
			),
			'backup/bundle'  => array(
				'POST',
				array(
					'paths' => array( 'type' => 'array', 'items' => array( 'type' => 'string' ), 'required' => true, 'maxItems' => 1000 ),
				),
				static function ( WP_REST_Request $request ) use ( $files ) {
					return $files->send_bundle( $request['paths'] );
				},
			),
			'backup/tables'  => array(
				'GET',
				array(),
				static function () use ( $database ) {
					return array( 'tables' => $database->tables() );
				},
			),
			'backup/rows'    => array(
				'GET',
				array(
					'table' => array( 'type' => 'string', 'required' => true ),
					'after' => array( 'type' => 'string', 'default' => '' ),
					'limit' => array( 'type' => 'integer', 'default' => 1000, 'minimum' => 1, 'maximum' => 5000 ),
					'bytes' => array( 'type' => 'integer', 'default' => Sitewarden_Connector_Backup_Database::BATCH_BYTES, 'minimum' => 1024, 'maximum' => 16777216 ),
				),
				static function ( WP_REST_Request $request ) use ( $database ) {
					$after = '' === $request['after'] ? null : json_decode( $request['after'], true );
					return $database->rows( $request['table'], $after, $request['limit'], $request['bytes'] );
				},
			),
			'restore/begin'  => array(
				'POST',
				array(),
				static function () use ( $restore ) {
					return $restore->begin();
				},
			),
			'restore/file'   => array(
				'POST',
				array(
					'restore' => array( 'type' => 'string', 'required' => true ),
					'path'    => array( 'type' => 'string', 'required' => true ),
					'offset'  => array( 'type' => 'integer', 'default' => 0, 'minimum' => 0 ),
					'mtime'   => array( 'type' => 'integer', 'default' => 0, 'minimum' => 0 ),
				),
				static function ( WP_REST_Request $request ) use ( $restore ) {
					return $restore->file( $request['restore'], $request['path'], $request['offset'], (string) $request->get_body(), $request['mtime'] );
				},
			),
			'restore/delete' => array(
				'POST',
				array(
					'restore' => array( 'type' => 'string', 'required' => true ),
					'paths'   => array( 'type' => 'array', 'items' => array( 'type' => 'string' ), 'required' => true ),
				),
				static function ( WP_REST_Request $request ) use ( $restore ) {
					return $restore->delete( $request['restore'], $request['paths'] );
				},
			),
			'restore/table'  => array(
				'POST',
				array(
					'restore' => array( 'type' => 'string', 'required' => true ),
					'table'   => array( 'type' => 'string', 'required' => true ),
					// The table's schema as data (see Sitewarden_Connector_Sql_Schema), never SQL.
					'schema'  => array( 'type' => 'object', 'required' => true ),
				),
				static function ( WP_REST_Request $request ) use ( $restore ) {
					return $restore->table( $request['restore'], $request['table'], $request['schema'] );
				},
			),
			'restore/rows'   => array(
				'POST',
				array(
					'restore' => array( 'type' => 'string', 'required' => true ),
					'table'   => array( 'type' => 'string', 'required' => true ),
					'sql'     => array( 'type' => 'string', 'required' => true ),
				),
				static function ( WP_REST_Request $request ) use ( $restore ) {
					return $restore->rows( $request['restore'], $request['table'], $request['sql'] );
				},
			),
			'restore/finish' => array(
				'POST',
				array(
					'restore' => array( 'type' => 'string', 'required' => true ),
					'tables'  => array( 'type' => 'array', 'items' => array( 'type' => 'string' ), 'default' => array() ),
				),
				static function ( WP_REST_Request $request ) use ( $restore ) {
					return $restore->finish( $request['restore'], (array) $request['tables'] );
				},
			),
			'restore/abort'  => array(
				'POST',
				array( 'restore' => array( 'type' => 'string', 'required' => true ) ),
				static function ( WP_REST_Request $request ) use ( $restore ) {
					return $restore->abort( $request['restore'] );
				},
			),
		);

		foreach ( $routes as $route => list( $method, $args, $callback ) ) {
			register_rest_route(
				$route_namespace,
				'/' . $route,
				array(
					'methods'             => $method,
					'permission_callback' => array( 'Sitewarden_Connector_Routes', 'is_administrator' ),
					'args'                => $args,
					'callback'            => static function ( WP_REST_Request $request ) use ( $callback ) {
						// Large tables and many files take longer than PHP's default 30 s where the host allows it.
						if ( function_exists( 'set_time_limit' ) ) {
							@set_time_limit( 300 ); // phpcs:ignore WordPress.PHP.NoSilencedErrors
						}
						return rest_ensure_response( $callback( $request ) );
					},
				)
			);
		}
	}
}
