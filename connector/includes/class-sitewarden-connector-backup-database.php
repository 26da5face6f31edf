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

	/** @return array Only the site's own tables (its prefix), never a restore's staging tables. */
	public function tables() {
		global $wpdb;
		$tables = array();
		foreach ( $this->table_names() as $name ) {
			$create   = $wpdb->get_row( 'SHOW CREATE TABLE `' . $name . '`', ARRAY_N ); // phpcs:ignore WordPress.DB.PreparedSQL -- validated name.
			$rows     = (int) $wpdb->get_var( 'SELECT COUNT(*) FROM `' . $name . '`' ); // phpcs:ignore WordPress.DB.PreparedSQL
			$checksum = $wpdb->get_row( 'CHECKSUM TABLE `' . $name . '`', ARRAY_N ); // phpcs:ignore WordPress.DB.PreparedSQL
			$tables[] = array(
				'name'       => $name,
				'create'     => $create[1],
				'rows'       => $rows,
				'primaryKey' => $this->primary_key( $name ),
				'checksum'   => null === $checksum[1] ? null : (string) $checksum[1],
			);
		}
		return $tables;
	}

	/**
	 * @param string     $table One of tables().
	 * @param array|null $after The previous batch's `next` cursor.
	 * @param int        $limit Most rows.
	 * @return array{sql: string, rows: int, next: array|null}|WP_Error
	 */
	public function rows( $table, $after, $limit ) {
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

		$result = $wpdb->get_results( $sql, ARRAY_A ); // phpcs:ignore WordPress.DB.PreparedSQL -- names quoted, cursor literals validated.
		if ( $wpdb->last_error ) {
			return new WP_Error( 'sitewarden_query_failed', $wpdb->last_error, array( 'status' => 500 ) );
		}
		$values = array();
		$bytes  = 0;
		$last   = null;
		foreach ( $result as $row ) {
			$literals = array();
			foreach ( $columns as $column => $numeric ) {
				$literals[] = $this->literal( $row[ $column ], $numeric );
			}
			$tuple    = '(' . implode( ',', $literals ) . ')';
			$values[] = $tuple;
			$bytes   += strlen( $tuple ) + 1;
			$last     = $row;
			if ( $bytes >= self::BATCH_BYTES ) {
				break;
			}
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
		$insert = 'INSERT INTO ' . $this->quote( $table ) . ' (' . implode( ',', array_map( array( $this, 'quote' ), array_keys( $columns ) ) ) . ") VALUES\n" . implode( ",\n", $values ) . ";\n";
		return array( 'sql' => $insert, 'rows' => count( $values ), 'next' => $next );
	}

	/** @return string[] */
	public function table_names() {
		global $wpdb;
		$names = array();
		$like  = $wpdb->esc_like( $wpdb->prefix ) . '%';
		foreach ( $wpdb->get_results( $wpdb->prepare( 'SHOW FULL TABLES LIKE %s', $like ), ARRAY_N ) as $row ) {
			$name = $row[0];
			if ( 'BASE TABLE' === $row[1] && preg_match( '/^[A-Za-z0-9_$]+$/D', $name ) && ! $this->is_staging( $name ) ) {
				$names[] = $name;
			}
		}
		sort( $names, SORT_STRING );
		return $names;
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
		foreach ( $wpdb->get_results( 'SHOW COLUMNS FROM ' . $this->quote( $table ), ARRAY_A ) as $column ) { // phpcs:ignore WordPress.DB.PreparedSQL
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
		foreach ( $wpdb->get_results( 'SHOW KEYS FROM ' . $this->quote( $table ) . " WHERE Key_name = 'PRIMARY'", ARRAY_A ) as $part ) { // phpcs:ignore WordPress.DB.PreparedSQL
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
