<?php
/**
 * A restore from begin to finish, keeping the site connected to the daemon.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * The daemon begins a restore, sends files and table rows in small steps, then finishes.
 *
 * Finishing is journaled in the staging directory (journal.json) so that it can be run again:
 * 1. the journal records what was staged, which tables to drop and the connection to keep
 *    (siteurl, home, the restoring user's row, capabilities and application passwords);
 * 2. that connection is written into the staged tables, then one RENAME TABLE swaps every
 *    staged table in and moves the dropped ones aside: all old tables or all restored ones;
 * 3. the journal moves to `files`; files are moved into place (a moved file leaves staging,
 *    so a second run moves only the rest) and planned deletions are made;
 * 4. the connection is written into the live tables too, the staging directory is removed and
 *    a small `.done` answer is left for a finish asked again.
 * A finish interrupted anywhere is completed by the next finish, abort or begin; a restore that
 * never reached the swap is discarded by abort and begin.
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

	/** Starts a restore; earlier ones left behind (a crash, a lost daemon) are completed or discarded first. */
	public function begin() {
		$connected = $this->filesystem->connect( ABSPATH );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}
		$settled = $this->settle_leftovers();
		if ( is_wp_error( $settled ) ) {
			return $settled;
		}
		$id  = strtolower( wp_generate_password( 16, false, false ) );
		$dir = $this->staging->dir( $id, true );
		if ( is_wp_error( $dir ) ) {
			return $dir;
		}
		return array( 'restoreId' => $id );
	}

	public function file( $id, $path, $offset, $bytes, $mtime ) {
		$dir = $this->staging_dir( $id );
		return is_wp_error( $dir ) ? $dir : $this->staging->write( $dir, $path, $offset, $bytes, $mtime );
	}

	public function delete( $id, $paths ) {
		$dir = $this->staging_dir( $id );
		if ( is_wp_error( $dir ) ) {
			return $dir;
		}
		$planned = $this->staging->plan_deletions( $dir, $paths );
		return is_wp_error( $planned ) ? $planned : array( 'planned' => count( (array) $paths ) );
	}

	public function table( $id, $table, $schema ) {
		$dir = $this->staging_dir( $id );
		if ( is_wp_error( $dir ) ) {
			return $dir;
		}
		$created = $this->database->create( $table, $schema );
		if ( is_wp_error( $created ) ) {
			return $created;
		}
		// One JSON string a line: a table's name may hold a line break.
		file_put_contents( $dir . '/tables', wp_json_encode( $table ) . "\n", FILE_APPEND ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		return array( 'table' => $table, 'staged' => true );
	}

	public function rows( $id, $table, $sql ) {
		$dir = $this->staging_dir( $id );
		return is_wp_error( $dir ) ? $dir : $this->database->insert( $table, $sql );
	}

	/**
	 * @param string   $id
	 * @param string[] $backup_tables Every table of the backup; the site's others are dropped. Empty: none dropped.
	 */
	public function finish( $id, $backup_tables ) {
		$done = $this->staging->done( $id );
		if ( null !== $done ) {
			return $done;
		}
		$dir = $this->staging->dir( $id );
		if ( is_wp_error( $dir ) ) {
			return $dir;
		}
		$connected = $this->filesystem->connect( ABSPATH );
		if ( is_wp_error( $connected ) ) {
			return $connected;
		}
		$journal = $this->staging->journal( $dir );
		if ( null === $journal ) {
			$staged  = is_file( $dir . '/tables' ) ? array_values( array_unique( array_map( array( $this, 'journal_name' ), file( $dir . '/tables', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES ) ) ) ) : array();
			$journal = array(
				'step'   => 'swap',
				'staged' => $staged,
				'drop'   => $backup_tables ? array_values( array_diff( $this->database->extra( $backup_tables ), $staged ) ) : array(),
				'kept'   => $this->connection_state(),
			);
			$written = $this->staging->write_journal( $dir, $journal );
			if ( is_wp_error( $written ) ) {
				return $written;
			}
		}
		return $this->complete( $id, $dir, $journal );
	}

	/** Discards a restore; one whose finish has swapped the tables in is completed instead. */
	public function abort( $id ) {
		$done = $this->staging->done( $id );
		if ( null !== $done ) {
			return array( 'aborted' => false, 'completed' => true );
		}
		$dir = $this->staging->dir( $id );
		$this->filesystem->connect( ABSPATH );
		if ( is_wp_error( $dir ) ) {
			$this->database->drop_staged();
			return array( 'aborted' => true );
		}
		$settled = $this->settle( $id, $dir );
		if ( is_wp_error( $settled ) ) {
			return $settled;
		}
		return 'completed' === $settled ? array( 'aborted' => false, 'completed' => true ) : array( 'aborted' => true );
	}

	/** The staging directory of a restore still taking files and tables (not finishing). */
	private function staging_dir( $id ) {
		$dir = $this->staging->dir( $id );
		if ( ! is_wp_error( $dir ) && null !== $this->staging->journal( $dir ) ) {
			return new WP_Error( 'sitewarden_restore_finishing', 'This restore is finishing; it takes nothing more.', array( 'status' => 409 ) );
		}
		return $dir;
	}

	/**
	 * Runs the journal from its step to the end.
	 *
	 * @return array|WP_Error
	 */
	private function complete( $id, $dir, $journal ) {
		/** Fires before each of a restore's finishing steps (`swap`, then `files`); lets tests interrupt a finish there. */
		if ( 'swap' === $journal['step'] ) {
			do_action( 'sitewarden_connector_restore_step', 'swap', $id );
			if ( ! $this->database->swapped( $journal['staged'], $journal['drop'] ) ) {
				$this->keep_connection( $journal['kept'], true, $journal['staged'] );
			}
			$swapped = $this->database->swap( $journal['staged'], $journal['drop'] );
			if ( is_wp_error( $swapped ) ) {
				return $swapped;
			}
			$journal['step'] = 'files';
			$written         = $this->staging->write_journal( $dir, $journal );
			if ( is_wp_error( $written ) ) {
				return $written;
			}
		}
		do_action( 'sitewarden_connector_restore_step', 'files', $id );

		$this->database->drop_replaced();
		$files = $this->staging->apply( $dir );
		if ( is_wp_error( $files ) ) {
			return $files;
		}
		$this->keep_connection( $journal['kept'], false, array() );
		$result = array(
			'tables'  => count( $journal['staged'] ),
			'dropped' => count( $journal['drop'] ),
			'moved'   => $files['moved'],
			'deleted' => $files['deleted'],
			'siteurl' => $journal['kept']['siteurl'],
		);
		$this->staging->mark_done( $id, $result );
		$this->staging->remove( $dir );
		flush_rewrite_rules();
		wp_cache_flush();
		return $result;
	}

	/**
	 * A restore left behind: completed when its finish got past the swap, discarded otherwise.
	 *
	 * @return string|WP_Error `completed` or `discarded`.
	 */
	private function settle( $id, $dir ) {
		$journal = $this->staging->journal( $dir );
		$swappable = null !== $journal && ( $journal['staged'] || $journal['drop'] );
		if ( null !== $journal && ( 'files' === $journal['step'] || ( $swappable && $this->database->swapped( $journal['staged'], $journal['drop'] ) ) ) ) {
			$completed = $this->complete( $id, $dir, $journal );
			return is_wp_error( $completed ) ? $completed : 'completed';
		}
		$this->database->drop_staged();
		$this->staging->remove( $dir );
		return 'discarded';
	}

	private function settle_leftovers() {
		foreach ( $this->staging->all() as $dir ) {
			$dir     = wp_normalize_path( $dir );
			$settled = $this->settle( substr( basename( $dir ), strlen( Sitewarden_Connector_Backup_Paths::STAGING_PREFIX ) ), $dir );
			if ( is_wp_error( $settled ) ) {
				return $settled;
			}
		}
		$this->database->drop_staged();
		$this->database->drop_replaced();
		$this->staging->clear_done();
		return true;
	}

	/** What the live site has now and must still have after the restore, read from the database itself. */
	private function connection_state() {
		global $wpdb;
		$option  = static function ( $name ) use ( $wpdb ) {
			return $wpdb->get_var( $wpdb->prepare( "SELECT option_value FROM {$wpdb->options} WHERE option_name = %s", $name ) );
		};
		$user_id = get_current_user_id();
		$meta    = array();
		foreach ( $this->kept_meta_keys() as $key ) {
			$value = $wpdb->get_var( $wpdb->prepare( "SELECT meta_value FROM {$wpdb->usermeta} WHERE user_id = %d AND meta_key = %s", $user_id, $key ) );
			if ( null !== $value ) {
				$meta[ $key ] = $value;
			}
		}
		return array(
			'siteurl' => $option( 'siteurl' ),
			'home'    => $option( 'home' ),
			'user_id' => $user_id,
			'user'    => $wpdb->get_row( $wpdb->prepare( "SELECT * FROM {$wpdb->users} WHERE ID = %d", $user_id ), ARRAY_A ),
			'meta'    => $meta,
		);
	}

	/** The user meta the daemon's connection rests on: the role, and the application passwords. */
	private function kept_meta_keys() {
		global $wpdb;
		return array( $wpdb->get_blog_prefix() . 'capabilities', $wpdb->get_blog_prefix() . 'user_level', '_application_passwords' );
	}

	/**
	 * Writes the kept connection into the staged tables (before the swap) or the live ones
	 * (after it): the site's address, the user with its role and application passwords, the
	 * connector active. Every write is idempotent.
	 *
	 * @param array    $kept
	 * @param bool     $staged_only Into the staged copies of $tables only.
	 * @param string[] $tables      The staged tables.
	 */
	private function keep_connection( $kept, $staged_only, $tables ) {
		global $wpdb;
		$table = function ( $live ) use ( $staged_only, $tables ) {
			if ( ! $staged_only ) {
				return $live;
			}
			return in_array( $live, $tables, true ) ? $this->database->staged_name( $live ) : null;
		};

		$options = $table( $wpdb->options );
		if ( $options ) {
			foreach ( array( 'siteurl', 'home' ) as $name ) {
				if ( null !== $kept[ $name ] ) {
					$wpdb->update( $options, array( 'option_value' => $kept[ $name ] ), array( 'option_name' => $name ) );
				}
			}
			$connector = plugin_basename( dirname( __DIR__ ) . '/sitewarden-connector.php' );
			$active    = maybe_unserialize( (string) $wpdb->get_var( $wpdb->prepare( "SELECT option_value FROM `$options` WHERE option_name = %s", 'active_plugins' ) ) ); // phpcs:ignore WordPress.DB.PreparedSQL
			$active    = is_array( $active ) ? $active : array();
			if ( ! in_array( $connector, $active, true ) ) {
				$active[] = $connector;
				$wpdb->query( $wpdb->prepare( "INSERT INTO `$options` ( option_name, option_value, autoload ) VALUES ( 'active_plugins', %s, 'yes' ) ON DUPLICATE KEY UPDATE option_value = VALUES( option_value )", serialize( $active ) ) ); // phpcs:ignore WordPress.DB.PreparedSQL, WordPress.PHP.DiscouragedPHPFunctions
			}
		}

		$users = $table( $wpdb->users );
		if ( $users && $kept['user'] && ! $wpdb->get_var( $wpdb->prepare( "SELECT ID FROM `$users` WHERE ID = %d", $kept['user_id'] ) ) ) { // phpcs:ignore WordPress.DB.PreparedSQL
			// The backup predates the restoring user (or never had it): it is put back as it is now.
			$wpdb->insert( $users, $kept['user'] );
		}

		$usermeta = $table( $wpdb->usermeta );
		if ( $usermeta && $kept['user_id'] ) {
			foreach ( $kept['meta'] as $key => $value ) {
				$where = array( 'user_id' => $kept['user_id'], 'meta_key' => $key ); // phpcs:ignore WordPress.DB.SlowDBQuery
				$now   = $wpdb->get_var( $wpdb->prepare( "SELECT meta_value FROM `$usermeta` WHERE user_id = %d AND meta_key = %s", $kept['user_id'], $key ) ); // phpcs:ignore WordPress.DB.PreparedSQL
				if ( null === $now ) {
					$wpdb->insert( $usermeta, $where + array( 'meta_value' => $value ) ); // phpcs:ignore WordPress.DB.SlowDBQuery
				} elseif ( $now !== $value ) {
					$wpdb->update( $usermeta, array( 'meta_value' => $value ), $where ); // phpcs:ignore WordPress.DB.SlowDBQuery
				}
			}
		}
		if ( ! $staged_only ) {
			wp_cache_flush();
		}
	}

	/** A name as table() wrote it to the journal (lines before 1.2.0 hold the bare name). */
	private function journal_name( $line ) {
		$name = json_decode( $line );
		return is_string( $name ) ? $name : $line;
	}
}
