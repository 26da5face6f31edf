<?php
/**
 * The site's database for a backup: tables with their schema and checksum, rows in batches.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * Rows travel as SQL INSERT text. Numbers are written as numbers; every other non-NULL
 * value as a hex literal (X'…'), so text in any charset and binary columns alike come
 * back byte for byte.
 */
final class Sitewarden_Connector_Backup_Database {

	/** A batch stops growing past this many bytes of SQL (one row is always sent). */
	const BATCH_BYTES = 524288;

	const NUMERIC = '/^(tinyint|smallint|mediumint|int|integer|bigint|decimal|numeric|float|double|real)\b/i';

	/**
	 * Only the site's own tables (its prefix), never a restore's staging tables, whatever their
	 * names. A table that cannot be read, or is not a plain table (a sequence, a system-versioned
	 * table), is listed with an `error` so the backup fails naming it instead of leaving it out.
	 *
	 * @return array
	 */
	public function tables() {
		global $wpdb;
		$tables   = array();
		$suppress = $wpdb->suppress_errors( true );
		$sizes    = $this->data_lengths();
		foreach ( $this->listed() as $name => $type ) {
			$name = (string) $name; // A name of digits only became an integer key.
			if ( 'BASE TABLE' !== $type ) {
				$tables[] = array( 'name' => $name, 'error' => sprintf( 'it is a %s, which backups do not carry', strtolower( $type ) ) );
				continue;
			}
			$create = $this->run( 'get_row', 'SHOW CREATE TABLE ' . $this->quote( $name ), ARRAY_N );
			$rows   = is_array( $create ) && isset( $create[1] ) ? $this->run( 'get_var', 'SELECT COUNT(*) FROM ' . $this->quote( $name ) ) : null;
			if ( null === $rows || $wpdb->last_error ) {
				$tables[] = array( 'name' => $name, 'error' => $wpdb->last_error ? $wpdb->last_error : 'it could not be read' );
				continue;
			}
			$checksum = $this->run( 'get_row', 'CHECKSUM TABLE ' . $this->quote( $name ), ARRAY_N );
			$tables[] = array(
				'name'       => $name,
				'create'     => $create[1],
				'rows'       => (int) $rows,
				'primaryKey' => $this->primary_key( $name ),
				'checksum'   => is_array( $checksum ) && null !== $checksum[1] ? (string) $checksum[1] : null,
				'bytes'      => isset( $sizes[ $name ] ) ? $sizes[ $name ] : 0,
			);
		}
		$wpdb->suppress_errors( $suppress );
		return $tables;
	}

	/**
	 * A query on names we quoted ourselves. wpdb checks a non-ASCII query by looking up the table
	 * it names, unquoted and cut short at characters of three UTF-8 bytes or more, which fails for
	 * names like ours. Behind a leading empty comment it recognises no table and checks the query
	 * against the connection's charset instead, which a quoted UTF-8 name passes. An INSERT keeps
	 * its keyword first, so that wpdb answers the number of rows it inserted.
	 */
	public function run( $method, $sql, $output = OBJECT ) {
		global $wpdb;
		$sql = 0 === strpos( $sql, 'INSERT INTO ' ) ? 'INSERT /**/INTO ' . substr( $sql, 12 ) : '/**/' . $sql;
		return 'query' === $method || 'get_var' === $method ? $wpdb->$method( $sql ) : $wpdb->$method( $sql, $output ); // phpcs:ignore WordPress.DB.PreparedSQL -- names quoted by quote().
	}

	/**
	 * @param string     $table One of tables().
	 * @param array|null $after The previous batch's `next` cursor.
	 * @param int        $limit Most rows.
	 * @param int        $max_bytes Most bytes of SQL, unless one row alone is larger (then it is sent alone).
	 * @return array{sql: string, rows: int, next: array|null}|WP_Error
	 */
	public function rows( $table, $after, $limit, $max_bytes = self::BATCH_BYTES ) {
		global $wpdb;
		if ( ! in_array( $table, $this->table_names(), true ) ) {
			return new WP_Error( 'sitewarden_table_not_found', sprintf( 'The site has no table %s.', $table ), array( 'status' => 404 ) );
		}
		$columns = $this->columns( $table );
		$key     = $this->primary_key( $table );
		$limit   = max( 1, min( 5000, (int) $limit ) );
		$select  = 'SELECT ' . implode( ', ', array_map( array( $this, 'quote' ), array_keys( $columns ) ) ) . ' FROM ' . $this->quote( $table );

		if ( $key ) {
			$where = '';
			if ( is_array( $after ) && isset( $after['key'] ) ) {
				$literals = $after['key'];
				if ( ! is_array( $literals ) || count( $literals ) !== count( $key ) ) {
					return $this->bad_cursor();
				}
				foreach ( $literals as $literal ) {
					if ( ! is_string( $literal ) || ! preg_match( "/^(-?[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?|X'[0-9A-F]*')$/Di", $literal ) ) {
						return $this->bad_cursor();
					}
				}
				$where = ' WHERE (' . implode( ', ', array_map( array( $this, 'quote' ), $key ) ) . ') > (' . implode( ', ', $literals ) . ')';
			}
			$sql = $select . $where . ' ORDER BY ' . implode( ', ', array_map( array( $this, 'quote' ), $key ) ) . ' LIMIT ' . $limit;
		} else {
			$offset = is_array( $after ) && isset( $after['offset'] ) ? max( 0, (int) $after['offset'] ) : 0;
			$sql    = $select . ' LIMIT ' . $limit . ' OFFSET ' . $offset;
		}

		$result = $this->run( 'get_results', $sql, ARRAY_A ); // Names quoted, cursor literals validated.
		if ( $wpdb->last_error ) {
			return new WP_Error( 'sitewarden_query_failed', sprintf( 'Could not read the rows of %1$s: %2$s', $table, $wpdb->last_error ), array( 'status' => 500 ) );
		}
		$header = 'INSERT INTO ' . $this->quote( $table ) . ' (' . implode( ',', array_map( array( $this, 'quote' ), array_keys( $columns ) ) ) . ") VALUES\n";
		$values = array();
		// Every row is followed by ",\n" or ";\n": the batch's exact length as it grows.
		$bytes = strlen( $header );
		$last  = null;
		foreach ( $result as $row ) {
			$literals = array();
			foreach ( $columns as $column => $numeric ) {
				$literals[] = $this->literal( $row[ $column ], $numeric );
			}
			$tuple = '(' . implode( ',', $literals ) . ')';
			if ( $values && $bytes + strlen( $tuple ) + 2 > $max_bytes ) {
				break;
			}
			$values[] = $tuple;
			$bytes   += strlen( $tuple ) + 2;
			$last     = $row;
		}
		if ( ! $values ) {
			return array( 'sql' => '', 'rows' => 0, 'next' => null );
		}
		$next = null;
		if ( count( $values ) === count( $result ) && count( $result ) < $limit ) {
			$next = null;
		} elseif ( $key ) {
			$next = array( 'key' => array_map( function ( $column ) use ( $last, $columns ) { return $this->literal( $last[ $column ], $columns[ $column ] ); }, $key ) );
		} else {
			$next = array( 'offset' => ( isset( $offset ) ? $offset : 0 ) + count( $values ) );
		}
		$insert = $header . implode( ",\n", $values ) . ";\n";
		return array( 'sql' => $insert, 'rows' => count( $values ), 'next' => $next );
	}

	/** @return string[] The site's plain tables. */
	public function table_names() {
		return array_map( 'strval', array_keys( array_filter( $this->listed(), function ( $type ) { return 'BASE TABLE' === $type; } ) ) );
	}

	/** @return array<string, string> Every table of the site's prefix but views and staging tables, by name: its type. */
	private function listed() {
		global $wpdb;
		$listed = array();
		$like   = $wpdb->esc_like( $wpdb->prefix ) . '%';
		foreach ( $wpdb->get_results( $wpdb->prepare( 'SHOW FULL TABLES LIKE %s', $like ), ARRAY_N ) as $row ) {
			// Views hold no data of their own.
			if ( 'VIEW' !== $row[1] && ! $this->is_staging( $row[0] ) ) {
				$listed[ (string) $row[0] ] = $row[1];
			}
		}
		uksort( $listed, function ( $a, $b ) { return strcmp( (string) $a, (string) $b ); } );
		return $listed;
	}

	/**
	 * What each table's data takes on disk (the server's estimate, as SHOW TABLE STATUS reports it):
	 * the daemon sizes a backup's byte budget and deadline from it.
	 *
	 * @return array<string, int>
	 */
	private function data_lengths() {
		global $wpdb;
		$sizes = array();
		foreach ( (array) $wpdb->get_results( 'SELECT TABLE_NAME, DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()', ARRAY_N ) as $row ) {
			$sizes[ (string) $row[0] ] = max( 0, (int) $row[1] );
		}
		return $sizes;
	}

	/** Any name MariaDB/MySQL accept: 1–64 characters of UTF-8 without NUL or 4-byte characters, no trailing white space. */
	public function is_legal_name( $name ) {
		return is_string( $name ) && '' !== $name && false === strpos( $name, "\0" ) && ! preg_match( '/[ \t\n\x0B\f\r]$/D', $name )
			&& 1 === preg_match( '//u', $name ) && 0 === preg_match( '/[\x{10000}-\x{10FFFF}]/u', $name ) && mb_strlen( $name, 'UTF-8' ) <= 64;
	}

	/** Restore's staging (`<prefix>swr_`) and replaced (`<prefix>swo_`) tables are never backed up. */
	public function is_staging( $name ) {
		global $wpdb;
		return 0 === strpos( $name, $wpdb->prefix . 'swr_' ) || 0 === strpos( $name, $wpdb->prefix . 'swo_' );
	}

	/** @return array<string, bool> Column name → numeric; generated columns are left out (they are computed again). */
	public function columns( $table ) {
		global $wpdb;
		$columns = array();
		foreach ( (array) $this->run( 'get_results', 'SHOW COLUMNS FROM ' . $this->quote( $table ), ARRAY_A ) as $column ) {
			if ( preg_match( '/VIRTUAL|STORED|PERSISTENT/i', (string) $column['Extra'] ) ) {
				continue;
			}
			$columns[ $column['Field'] ] = (bool) preg_match( self::NUMERIC, $column['Type'] );
		}
		return $columns;
	}

	/** @return string[] */
	private function primary_key( $table ) {
		global $wpdb;
		$key = array();
		foreach ( (array) $this->run( 'get_results', 'SHOW KEYS FROM ' . $this->quote( $table ) . " WHERE Key_name = 'PRIMARY'", ARRAY_A ) as $part ) {
			$key[ (int) $part['Seq_in_index'] ] = $part['Column_name'];
		}
		ksort( $key );
		return array_values( $key );
	}

	private function literal( $value, $numeric ) {
		if ( null === $value ) {
			return 'NULL';
		}
		if ( $numeric && preg_match( '/^-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$/Di', $value ) ) {
			return $value;
		}
		return "X'" . bin2hex( $value ) . "'";
	}

	public function quote( $name ) {
		return '`' . str_replace( '`', '``', $name ) . '`';
	}

	private function bad_cursor() {
		return new WP_Error( 'rest_invalid_param', 'after is not a cursor this connector handed out.', array( 'status' => 400 ) );
	}
}
