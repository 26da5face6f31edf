<?php
/**
 * A restore's tables: each is rebuilt beside the live one, then all are swapped at once.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * `<prefix>posts` is rebuilt as `<prefix>swr_posts`; finishing renames every live table to
 * `<prefix>swo_…` and every staged one into its place in one RENAME TABLE statement, which
 * MariaDB/MySQL carry out atomically, so the site never sees half its tables from another time.
 */
final class Sitewarden_Connector_Restore_Database {

	/** @var Sitewarden_Connector_Backup_Database */
	private $database;

	public function __construct( Sitewarden_Connector_Backup_Database $database ) {
		$this->database = $database;
	}

	/** @return string|WP_Error The staged table's name. */
	public function staged_name( $table ) {
		global $wpdb;
		$prefix = $wpdb->prefix;
		if ( ! $this->database->is_legal_name( $table ) || 0 !== strpos( $table, $prefix ) || $this->database->is_staging( $table ) ) {
			return new WP_Error( 'rest_invalid_param', sprintf( 'table must be one of the site\'s own tables (prefix %s).', $prefix ), array( 'status' => 400 ) );
		}
		$staged = $prefix . 'swr_' . substr( $table, strlen( $prefix ) );
		if ( mb_strlen( $staged, 'UTF-8' ) > 64 ) {
			return new WP_Error( 'sitewarden_table_name_too_long', sprintf( 'The table %1$s cannot be restored: its staged copy %2$s would be longer than the 64 characters MariaDB and MySQL allow in a name.', $table, $staged ), array( 'status' => 422 ) );
		}
		return $staged;
	}

	public function old_name( $table ) {
		global $wpdb;
		return $wpdb->prefix . 'swo_' . substr( $table, strlen( $wpdb->prefix ) );
	}

	/**
	 * Creates the staged table from the backup's schema (data, never SQL): the statement is
	 * written here, by the same rules as the daemon's dump (class-sitewarden-connector-sql-schema.php).
	 *
	 * @return true|WP_Error
	 */
	public function create( $table, $schema ) {
		global $wpdb;
		$staged = $this->staged_name( $table );
		if ( is_wp_error( $staged ) ) {
			return $staged;
		}
		$statement = Sitewarden_Connector_Sql_Schema::create_table( $staged, $schema );
		if ( is_wp_error( $statement ) ) {
			return new WP_Error( 'rest_invalid_param', sprintf( 'The schema of %1$s is not one a restore creates: %2$s', $table, $statement->get_error_message() ), array( 'status' => 400 ) );
		}
		$this->database->run( 'query', 'DROP TABLE IF EXISTS ' . $this->database->quote( $staged ) );
		if ( false === $this->database->run( 'query', $statement ) ) {
			return new WP_Error( 'sitewarden_restore_failed', sprintf( 'Could not create %1$s: %2$s', $staged, $wpdb->last_error ), array( 'status' => 500 ) );
		}
		return true;
	}

	/**
	 * Inserts a batch of rows as the backup wrote it, after checking it is exactly one INSERT of
	 * this table's rows: quoted column names, then rows of NULL, numbers and X'hex' literals only.
	 *
	 * @return array|WP_Error
	 */
	public function insert( $table, $sql ) {
		global $wpdb;
		$staged = $this->staged_name( $table );
		if ( is_wp_error( $staged ) ) {
			return $staged;
		}
		$rows = Sitewarden_Connector_Sql_Schema::count_rows( $table, $sql );
		if ( is_wp_error( $rows ) ) {
			return new WP_Error( 'rest_invalid_param', sprintf( 'sql must be a batch of rows of %1$s as the backup wrote it: %2$s', $table, $rows->get_error_message() ), array( 'status' => 400 ) );
		}
		$header = 'INSERT INTO ' . $this->database->quote( $table ) . ' (';
		$result = $this->database->run( 'query', 'INSERT INTO ' . $this->database->quote( $staged ) . ' (' . substr( $sql, strlen( $header ) ) );
		if ( false === $result ) {
			return new WP_Error( 'sitewarden_restore_failed', sprintf( 'Could not insert rows into %1$s: %2$s', $staged, $wpdb->last_error ), array( 'status' => 500 ) );
		}
		return array( 'table' => $table, 'rows' => (int) $result );
	}

	/**
	 * The site's tables that the backup did not have (created since): the swap drops them.
	 *
	 * @param string[] $backup Every table the backup has.
	 * @return string[]
	 */
	public function extra( $backup ) {
		return array_values( array_diff( $this->database->table_names(), (array) $backup ) );
	}

	/** Whether the staged copy of a table is there, i.e. the swap has not happened yet. */
	private function exists( $table ) {
		global $wpdb;
		return $table === $this->database->run( 'get_var', $wpdb->prepare( 'SHOW TABLES LIKE %s', $wpdb->esc_like( $table ) ) );
	}

	/**
	 * Swaps every staged table in and moves the tables to drop aside, in one statement:
	 * the site has all its old tables or all its restored ones. Safe to call again: once
	 * the staged tables are gone the swap happened, and nothing is renamed twice.
	 *
	 * @param string[] $tables Live names of the staged tables.
	 * @param string[] $drop   Live tables the backup did not have.
	 * @return true|WP_Error
	 */
	public function swap( $tables, $drop ) {
		global $wpdb;
		$live  = $this->database->table_names();
		$pairs = array();
		foreach ( $tables as $table ) {
			$staged = $this->staged_name( $table );
			if ( is_wp_error( $staged ) ) {
				return $staged;
			}
			if ( ! $this->exists( $staged ) ) {
				continue;
			}
			if ( in_array( $table, $live, true ) ) {
				$this->database->run( 'query', 'DROP TABLE IF EXISTS ' . $this->database->quote( $this->old_name( $table ) ) );
				$pairs[] = $this->database->quote( $table ) . ' TO ' . $this->database->quote( $this->old_name( $table ) );
			}
			$pairs[] = $this->database->quote( $staged ) . ' TO ' . $this->database->quote( $table );
		}
		foreach ( $drop as $table ) {
			if ( in_array( $table, $live, true ) && ! is_wp_error( $this->staged_name( $table ) ) ) {
				$this->database->run( 'query', 'DROP TABLE IF EXISTS ' . $this->database->quote( $this->old_name( $table ) ) );
				$pairs[] = $this->database->quote( $table ) . ' TO ' . $this->database->quote( $this->old_name( $table ) );
			}
		}
		if ( $pairs && false === $this->database->run( 'query', 'RENAME TABLE ' . implode( ', ', $pairs ) ) ) {
			return new WP_Error( 'sitewarden_restore_failed', sprintf( 'Could not swap the restored tables in: %s', $wpdb->last_error ), array( 'status' => 500 ) );
		}
		return true;
	}

	/** Drops the tables the swap replaced. */
	public function drop_replaced() {
		global $wpdb;
		foreach ( $wpdb->get_col( $wpdb->prepare( 'SHOW TABLES LIKE %s', $wpdb->esc_like( $wpdb->prefix . 'swo_' ) . '%' ) ) as $table ) {
			$this->database->run( 'query', 'DROP TABLE IF EXISTS ' . $this->database->quote( $table ) );
		}
	}

	/**
	 * Whether the swap of these staged tables and drops has happened: RENAME TABLE is atomic,
	 * so the staged tables (or, with none staged, the dropped ones) are either all still there or all gone.
	 */
	public function swapped( $tables, $drop ) {
		global $wpdb;
		if ( ! $tables ) {
			return ! array_intersect( (array) $drop, $this->database->table_names() );
		}
		foreach ( $tables as $table ) {
			$staged = $this->staged_name( $table );
			if ( ! is_wp_error( $staged ) && $this->exists( $staged ) ) {
				return false;
			}
		}
		return true;
	}

	/** Drops every staged table (an aborted or crashed restore). */
	public function drop_staged() {
		global $wpdb;
		foreach ( $wpdb->get_col( $wpdb->prepare( 'SHOW TABLES LIKE %s', $wpdb->esc_like( $wpdb->prefix . 'swr_' ) . '%' ) ) as $table ) {
			$this->database->run( 'query', 'DROP TABLE IF EXISTS ' . $this->database->quote( $table ) );
		}
	}
}
