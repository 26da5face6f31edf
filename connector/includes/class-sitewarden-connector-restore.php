<?php
/**
 * A restore from begin to finish, keeping the site connected to the daemon.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * The daemon begins a restore, sends files and table rows in small steps, then finishes.
 * Finishing swaps the tables in, moves the files into place and then puts back what must
 * survive: the site's own address (siteurl, home), the restoring user's application
 * passwords (the daemon's credential) and the connector being active.
 */
final class Sitewarden_Connector_Restore {

	/** @var Sitewarden_Connector_Restore_Staging */
	private $staging;

	/** @var Sitewarden_Connector_Restore_Database */
	private $database;

	/** @var Sitewarden_Connector_Filesystem */
	private $filesystem;

	public function __construct( Sitewarden_Connector_Restore_Staging $staging, Sitewarden_Connector_Restore_Database $database, Sitewarden_Connector_Filesystem $filesystem ) {
		$this->staging    = $staging;
		$this->database   = $database;
		$this->filesystem = $filesystem;
	}

	/** Starts a restore; leftovers of earlier ones (a crash, a lost daemon) are cleared first. */
	public function begin() {
		$connected = $this->filesystem->connect( ABSPATH );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}
		$this->clear_leftovers();
		$id  = strtolower( wp_generate_password( 16, false, false ) );
		$dir = $this->staging->dir( $id, true );
		if ( is_wp_error( $dir ) ) {
			return $dir;
		}
		return array( 'restoreId' => $id );
	}

	public function file( $id, $path, $offset, $bytes, $mtime ) {
		$dir = $this->staging->dir( $id );
		return is_wp_error( $dir ) ? $dir : $this->staging->write( $dir, $path, $offset, $bytes, $mtime );
	}

	public function delete( $id, $paths ) {
		$dir = $this->staging->dir( $id );
		if ( is_wp_error( $dir ) ) {
			return $dir;
		}
		$planned = $this->staging->plan_deletions( $dir, $paths );
		return is_wp_error( $planned ) ? $planned : array( 'planned' => count( (array) $paths ) );
	}

	public function table( $id, $table, $create ) {
		$dir = $this->staging->dir( $id );
		if ( is_wp_error( $dir ) ) {
			return $dir;
		}
		$created = $this->database->create( $table, $create );
		if ( is_wp_error( $created ) ) {
			return $created;
		}
		file_put_contents( $dir . '/tables', $table . "\n", FILE_APPEND ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		return array( 'table' => $table, 'staged' => true );
	}

	public function rows( $id, $table, $sql ) {
		$dir = $this->staging->dir( $id );
		return is_wp_error( $dir ) ? $dir : $this->database->insert( $table, $sql );
	}

	public function finish( $id ) {
		global $wpdb;
		$dir = $this->staging->dir( $id );
		if ( is_wp_error( $dir ) ) {
			return $dir;
		}
		$connected = $this->filesystem->connect( ABSPATH );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}
		$kept = $this->connection_state();

		$tables  = is_file( $dir . '/tables' ) ? array_values( array_unique( file( $dir . '/tables', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES ) ) ) : array();
		$swapped = $this->database->swap( $tables );
		if ( is_wp_error( $swapped ) ) {
			return $swapped;
		}
		$files = $this->staging->apply( $dir );
		if ( is_wp_error( $files ) ) {
			return $files;
		}
		wp_cache_flush();
		$this->keep_connection( $kept );
		$this->staging->remove( $dir );
		flush_rewrite_rules();
		wp_cache_flush();
		return array(
			'tables'  => $swapped,
			'moved'   => $files['moved'],
			'deleted' => $files['deleted'],
			'siteurl' => $kept['siteurl'],
		);
	}

	public function abort( $id ) {
		$dir = $this->staging->dir( $id );
		$this->filesystem->connect( ABSPATH );
		$this->database->drop_staged();
		if ( ! is_wp_error( $dir ) ) {
			$this->staging->remove( $dir );
		}
		return array( 'aborted' => true );
	}

	private function clear_leftovers() {
		$this->database->drop_staged();
		foreach ( $this->staging->all() as $dir ) {
			$this->staging->remove( wp_normalize_path( $dir ) );
		}
	}

	/** What the live site has now and must still have after the restore, read from the database itself. */
	private function connection_state() {
		global $wpdb;
		$option = static function ( $name ) use ( $wpdb ) {
			return $wpdb->get_var( $wpdb->prepare( "SELECT option_value FROM {$wpdb->options} WHERE option_name = %s", $name ) );
		};
		$user_id = get_current_user_id();
		return array(
			'siteurl'   => $option( 'siteurl' ),
			'home'      => $option( 'home' ),
			'user_id'   => $user_id,
			'passwords' => $wpdb->get_var( $wpdb->prepare( "SELECT meta_value FROM {$wpdb->usermeta} WHERE user_id = %d AND meta_key = %s", $user_id, '_application_passwords' ) ),
		);
	}

	private function keep_connection( $kept ) {
		global $wpdb;
		foreach ( array( 'siteurl', 'home' ) as $name ) {
			if ( null !== $kept[ $name ] ) {
				$wpdb->update( $wpdb->options, array( 'option_value' => $kept[ $name ] ), array( 'option_name' => $name ) );
			}
		}
		if ( null !== $kept['passwords'] && $kept['user_id'] ) {
			$wpdb->delete( $wpdb->usermeta, array( 'user_id' => $kept['user_id'], 'meta_key' => '_application_passwords' ) ); // phpcs:ignore WordPress.DB.SlowDBQuery
			$wpdb->insert( $wpdb->usermeta, array( 'user_id' => $kept['user_id'], 'meta_key' => '_application_passwords', 'meta_value' => $kept['passwords'] ) ); // phpcs:ignore WordPress.DB.SlowDBQuery
		}
		wp_cache_flush();
		$connector = plugin_basename( dirname( __DIR__ ) . '/sitewarden-connector.php' );
		$active    = (array) get_option( 'active_plugins', array() );
		if ( ! in_array( $connector, $active, true ) ) {
			$active[] = $connector;
			update_option( 'active_plugins', $active );
		}
	}
}
