<?php
/**
 * The wp-admin include files the connector's routes rely on.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * REST requests run outside wp-admin, so the upgraders, get_plugins(),
 * delete_theme() and the filesystem API are not loaded; each route loads them first.
 */
final class Sitewarden_Connector_Admin_Apis {

	const FILES = array(
		'wp-admin/includes/file.php',
		'wp-admin/includes/misc.php',
		'wp-admin/includes/plugin.php',
		'wp-admin/includes/theme.php',
		'wp-admin/includes/update.php',
		'wp-admin/includes/class-wp-upgrader.php',
	);

	public static function load() {
		foreach ( self::FILES as $file ) {
			require_once ABSPATH . $file;
		}
	}
}
