<?php
/**
 * Plugin Name:       Sitewarden Connector
 * Description:       Lets a Sitewarden daemon do what WordPress core's REST API cannot: update WordPress, translations, plugins and themes, install themes from the theme directory, enforce plugin dependencies, activate and delete themes, report available updates, take and restore backups in small steps, and give a one-click, single-use wp-admin sign-in link (namespace sitewarden/v1). What it stores: in wp-content/sitewarden-rollback/, the SHA-256 of the rollback path's secret (never the secret), the copies an update replaces (kept 14 days) and that path's request counter; in a transient, each sign-in link's token hash for its minute. Every route checks the calling user's capabilities.
 * Version:           1.8.0
 * Requires at least: 6.1
 * Requires PHP:      7.4
 * Author:            Sitewarden
 * License:           GPLv2 or later
 * License URI:       https://www.gnu.org/licenses/gpl-2.0.html
 * Text Domain:       sitewarden-connector
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

define( 'SITEWARDEN_CONNECTOR_VERSION', '1.8.0' );

/*
 * Every class is loaded up front, not on demand: the connector can update itself,
 * and a lazily required file could be missing or newer halfway through that request.
 */
require_once __DIR__ . '/includes/class-sitewarden-connector-admin-apis.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-filesystem.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-upgrader-runner.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-info.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-updates.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-plugin-updates.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-theme-updates.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-themes.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-theme-install.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-plugin-status.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-core-updates.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-translation-updates.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-backup-paths.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-backup-files.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-backup-database.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-sql-schema.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-restore-staging.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-restore-database.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-restore.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-backup-routes.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-rollback.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-admin-login.php';
require_once __DIR__ . '/includes/class-sitewarden-connector-routes.php';

add_action( 'rest_api_init', array( 'Sitewarden_Connector_Routes', 'register' ) );
add_action( 'login_init', array( 'Sitewarden_Connector_Admin_Login', 'consume_from_request' ) );
