<?php
/**
 * The SQL a restore runs, built or checked here by the rules the daemon's dump follows
 * (src/backups/sql-schema.ts and sql-dump.ts in Sitewarden).
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * A table's schema arrives as data and CREATE TABLE is written from it: every name quoted,
 * every keyword from a fixed list, so a backup cannot carry any other statement (GRANT,
 * DROP DATABASE, …) or a table option that reaches outside the table (DATA DIRECTORY,
 * CONNECTION, …). Row batches must be exactly one INSERT of literal rows.
 */
final class Sitewarden_Connector_Sql_Schema {

	const TYPES          = array( 'tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'decimal', 'numeric', 'float', 'double', 'real', 'bit', 'bool', 'boolean', 'char', 'varchar', 'binary', 'varbinary', 'tinytext', 'text', 'mediumtext', 'longtext', 'tinyblob', 'blob', 'mediumblob', 'longblob', 'enum', 'set', 'date', 'time', 'datetime', 'timestamp', 'year', 'json', 'uuid', 'inet4', 'inet6', 'geometry', 'point', 'linestring', 'polygon', 'multipoint', 'multilinestring', 'multipolygon', 'geometrycollection' );
	const ENGINES        = array( 'InnoDB', 'MyISAM', 'Aria', 'MEMORY', 'ARCHIVE', 'CSV', 'BLACKHOLE' );
	const ROW_FORMATS    = array( 'DEFAULT', 'DYNAMIC', 'FIXED', 'COMPRESSED', 'REDUNDANT', 'COMPACT', 'PAGE' );
	const OPTIONS        = array( 'AUTO_INCREMENT', 'AVG_ROW_LENGTH', 'CHECKSUM', 'DELAY_KEY_WRITE', 'KEY_BLOCK_SIZE', 'MAX_ROWS', 'MIN_ROWS', 'PACK_KEYS', 'PAGE_CHECKSUM', 'PAGE_COMPRESSED', 'PAGE_COMPRESSION_LEVEL', 'STATS_AUTO_RECALC', 'STATS_PERSISTENT', 'STATS_SAMPLE_PAGES', 'TRANSACTIONAL' );
	const ACTIONS        = array( 'RESTRICT', 'CASCADE', 'SET NULL', 'NO ACTION', 'SET DEFAULT' );
	const INDEX_HEADS    = array( 'primary' => 'PRIMARY KEY', 'unique' => 'UNIQUE KEY', 'key' => 'KEY', 'fulltext' => 'FULLTEXT KEY', 'spatial' => 'SPATIAL KEY' );
	const INDEX_METHODS  = array( 'BTREE', 'HASH', 'RTREE' );
	const NUMBER         = '/^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/D';
	const CHARSET        = '/^[A-Za-z0-9_]{1,64}$/D';
	const LITERAL        = "(?:NULL|-?\\d+(?:\\.\\d+)?(?:[eE][-+]?\\d+)?|X'[0-9A-Fa-f]*+')";
	const MAX_DIMENSION  = 4294967296;

	/** @return string|WP_Error The CREATE TABLE statement of `$name` with `$schema`. */
	public static function create_table( $name, $schema ) {
		try {
			$s = self::fields( $schema, array( 'columns', 'indexes', 'foreignKeys', 'options' ) );
			if ( ! $s['columns'] ) {
				throw new InvalidArgumentException( 'a table needs a column' );
			}
			$lines = array();
			foreach ( self::items( $s['columns'] ) as $column ) {
				$lines[] = self::column( $column );
			}
			foreach ( self::items( $s['indexes'] ) as $index ) {
				$lines[] = self::index( $index );
			}
			foreach ( self::items( $s['foreignKeys'] ) as $key ) {
				$key  = self::fields( $key, array( 'columns', 'table', 'references' ) );
				$line = isset( $key['name'] ) ? 'CONSTRAINT ' . self::name( $key['name'] ) . ' ' : '';
				$line .= 'FOREIGN KEY (' . implode( ',', array_map( array( __CLASS__, 'name' ), self::items( $key['columns'], 1 ) ) ) . ') REFERENCES ' . self::name( $key['table'] ) . ' (' . implode( ',', array_map( array( __CLASS__, 'name' ), self::items( $key['references'], 1 ) ) ) . ')';
				foreach ( array( 'onDelete' => ' ON DELETE ', 'onUpdate' => ' ON UPDATE ' ) as $field => $words ) {
					if ( isset( $key[ $field ] ) ) {
						$line .= $words . self::one_of( $key[ $field ], self::ACTIONS );
					}
				}
				$lines[] = $line;
			}
			$options = array();
			if ( isset( $s['engine'] ) ) {
				$options[] = 'ENGINE=' . self::one_of( $s['engine'], self::ENGINES );
			}
			foreach ( self::items( $s['options'] ) as $option ) {
				if ( ! is_array( $option ) || 2 !== count( $option ) || ! is_string( $option[1] ) || ! preg_match( '/^(\d{1,20}|DEFAULT)$/D', $option[1] ) ) {
					throw new InvalidArgumentException( 'a table option is malformed' );
				}
				$options[] = self::one_of( $option[0], self::OPTIONS ) . '=' . $option[1];
			}
			if ( isset( $s['charset'] ) ) {
				$options[] = 'DEFAULT CHARSET=' . self::charset( $s['charset'] );
			}
			if ( isset( $s['collation'] ) ) {
				$options[] = 'COLLATE=' . self::charset( $s['collation'] );
			}
			if ( isset( $s['rowFormat'] ) ) {
				$options[] = 'ROW_FORMAT=' . self::one_of( $s['rowFormat'], self::ROW_FORMATS );
			}
			if ( isset( $s['comment'] ) ) {
				$options[] = 'COMMENT=' . self::text( $s['comment'] );
			}
			return 'CREATE TABLE ' . self::name( $name ) . " (\n  " . implode( ",\n  ", $lines ) . "\n)" . ( $options ? ' ' . implode( ' ', $options ) : '' );
		} catch ( InvalidArgumentException $error ) {
			return new WP_Error( 'rest_invalid_param', $error->getMessage(), array( 'status' => 400 ) );
		}
	}

	/** @return int|WP_Error How many rows the batch of `$table` holds, if it is one INSERT of literal rows. */
	public static function count_rows( $table, $sql ) {
		$header = 'INSERT INTO ' . self::quote( $table ) . ' (';
		if ( ! is_string( $sql ) || 0 !== strpos( $sql, $header ) ) {
			return new WP_Error( 'rest_invalid_param', 'the batch does not begin with INSERT INTO the table', array( 'status' => 400 ) );
		}
		if ( ! preg_match( '/\G(`(?:[^`]|``)*+`(?:,`(?:[^`]|``)*+`)*+)\) VALUES\n/', $sql, $match, 0, strlen( $header ) ) ) {
			return new WP_Error( 'rest_invalid_param', 'the batch\'s columns are not a list of quoted names', array( 'status' => 400 ) );
		}
		$arity = preg_match_all( '/`(?:[^`]|``)*+`/', $match[1] );
		$tuple = '/\G\(' . self::LITERAL . '(?:,' . self::LITERAL . '){' . ( $arity - 1 ) . '}\)(,\n|;\n)/';
		$at    = strlen( $header ) + strlen( $match[0] );
		for ( $rows = 1; ; $rows++ ) {
			if ( ! preg_match( $tuple, $sql, $row, 0, $at ) ) {
				return new WP_Error( 'rest_invalid_param', sprintf( 'row %d of the batch is not %d literals (NULL, a number or X\'hex\')', $rows, $arity ), array( 'status' => 400 ) );
			}
			$at += strlen( $row[0] );
			if ( ";\n" === $row[1] ) {
				return strlen( $sql ) === $at ? $rows : new WP_Error( 'rest_invalid_param', 'the batch goes on after its statement ends', array( 'status' => 400 ) );
			}
		}
	}

	private static function column( $column ) {
		$c    = self::fields( $column, array( 'name', 'type', 'nullable' ) );
		$type = self::fields( $c['type'], array( 'name' ) );
		$sql  = self::name( $c['name'] ) . ' ' . self::one_of( $type['name'], self::TYPES );
		if ( isset( $type['values'] ) ) {
			$sql .= '(' . implode( ',', array_map( array( __CLASS__, 'text' ), self::items( $type['values'] ) ) ) . ')';
		} elseif ( ! empty( $type['args'] ) ) {
			$args = self::items( $type['args'] );
			if ( count( $args ) > 2 ) {
				throw new InvalidArgumentException( 'a type has more than two dimensions' );
			}
			$sql .= '(' . implode( ',', array_map( array( __CLASS__, 'dimension' ), $args ) ) . ')';
		}
		$sql .= ! empty( $type['unsigned'] ) ? ' unsigned' : '';
		$sql .= ! empty( $type['zerofill'] ) ? ' zerofill' : '';
		$sql .= isset( $c['charset'] ) ? ' CHARACTER SET ' . self::charset( $c['charset'] ) : '';
		$sql .= isset( $c['collation'] ) ? ' COLLATE ' . self::charset( $c['collation'] ) : '';
		$sql .= true === $c['nullable'] ? ' NULL' : ' NOT NULL';
		if ( isset( $c['default'] ) ) {
			$default = self::fields( $c['default'], array( 'kind' ) );
			switch ( $default['kind'] ) {
				case 'null':
					$sql .= ' DEFAULT NULL';
					break;
				case 'string':
					$sql .= ' DEFAULT ' . self::text( isset( $default['value'] ) ? $default['value'] : null );
					break;
				case 'number':
					$sql .= ' DEFAULT ' . self::matching( isset( $default['value'] ) ? $default['value'] : null, self::NUMBER );
					break;
				case 'bits':
					$sql .= " DEFAULT b'" . self::matching( isset( $default['value'] ) ? $default['value'] : null, '/^[01]{0,64}$/D' ) . "'";
					break;
				case 'now':
					$sql .= ' DEFAULT ' . self::now( isset( $default['precision'] ) ? $default['precision'] : null );
					break;
				default:
					throw new InvalidArgumentException( 'a default is of an unknown kind' );
			}
		}
		if ( array_key_exists( 'onUpdateNow', $c ) ) {
			$sql .= ' ON UPDATE ' . self::now( $c['onUpdateNow'] );
		}
		$sql .= ! empty( $c['autoIncrement'] ) ? ' AUTO_INCREMENT' : '';
		$sql .= isset( $c['comment'] ) ? ' COMMENT ' . self::text( $c['comment'] ) : '';
		$sql .= ! empty( $c['jsonValid'] ) ? ' CHECK (json_valid(' . self::name( $c['name'] ) . '))' : '';
		return $sql;
	}

	private static function index( $index ) {
		$i     = self::fields( $index, array( 'kind', 'columns' ) );
		$kind  = self::one_of( $i['kind'], array_keys( self::INDEX_HEADS ) );
		$parts = array();
		foreach ( self::items( $i['columns'], 1 ) as $part ) {
			$part    = self::fields( $part, array( 'name' ) );
			$parts[] = self::name( $part['name'] ) . ( isset( $part['length'] ) ? '(' . self::dimension( $part['length'] ) . ')' : '' ) . ( ! empty( $part['descending'] ) ? ' DESC' : '' );
		}
		$sql  = self::INDEX_HEADS[ $kind ] . ( 'primary' !== $kind && isset( $i['name'] ) ? ' ' . self::name( $i['name'] ) : '' );
		$sql .= ' (' . implode( ',', $parts ) . ')';
		$sql .= isset( $i['using'] ) ? ' USING ' . self::one_of( $i['using'], self::INDEX_METHODS ) : '';
		$sql .= isset( $i['comment'] ) ? ' COMMENT ' . self::text( $i['comment'] ) : '';
		return $sql;
	}

	private static function now( $precision ) {
		if ( null !== $precision && ( ! is_int( $precision ) || $precision < 0 || $precision > 6 ) ) {
			throw new InvalidArgumentException( 'a timestamp precision is not 0–6' );
		}
		return 'current_timestamp(' . ( null === $precision ? '' : $precision ) . ')';
	}

	/** The array's fields, if it is one and has the required ones. */
	private static function fields( $value, $required ) {
		if ( ! is_array( $value ) ) {
			throw new InvalidArgumentException( 'an object is expected' );
		}
		foreach ( $required as $field ) {
			if ( ! array_key_exists( $field, $value ) ) {
				throw new InvalidArgumentException( sprintf( '%s is missing', $field ) );
			}
		}
		return $value;
	}

	private static function items( $value, $min = 0 ) {
		if ( ! is_array( $value ) || count( $value ) < $min || array_values( $value ) !== $value ) {
			throw new InvalidArgumentException( 'a list is expected' );
		}
		return $value;
	}

	private static function one_of( $value, $allowed ) {
		if ( ! is_string( $value ) || ! in_array( $value, $allowed, true ) ) {
			throw new InvalidArgumentException( sprintf( '%s is not one of the allowed words', is_string( $value ) ? $value : gettype( $value ) ) );
		}
		return $value;
	}

	private static function matching( $value, $pattern ) {
		if ( ! is_string( $value ) || ! preg_match( $pattern, $value ) ) {
			throw new InvalidArgumentException( 'a value is malformed' );
		}
		return $value;
	}

	private static function dimension( $value ) {
		if ( ! is_int( $value ) || $value < 0 || $value > self::MAX_DIMENSION ) {
			throw new InvalidArgumentException( 'a length is not a whole number' );
		}
		return (string) $value;
	}

	private static function charset( $value ) {
		return self::matching( $value, self::CHARSET );
	}

	private static function name( $value ) {
		$database = new Sitewarden_Connector_Backup_Database();
		if ( ! $database->is_legal_name( $value ) ) {
			throw new InvalidArgumentException( 'a name is not a legal identifier' );
		}
		return self::quote( $value );
	}

	private static function quote( $name ) {
		return '`' . str_replace( '`', '``', $name ) . '`';
	}

	/** A string literal; backslashes escaped too, as WordPress runs with backslash escapes on. */
	private static function text( $value ) {
		if ( ! is_string( $value ) || 1 !== preg_match( '//u', $value ) ) {
			throw new InvalidArgumentException( 'a text is not UTF-8' );
		}
		return "'" . str_replace( array( '\\', "'", "\0" ), array( '\\\\', "''", '\\0' ), $value ) . "'";
	}
}
