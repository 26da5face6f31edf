<?php
/**
 * The site's files for a backup: a paged manifest and raw byte ranges.
 *
 * @package Sitewarden_Connector
 */

defined( 'ABSPATH' ) || exit;

/**
 * The manifest is walked in one fixed order (names sorted, a directory compared as
 * "name/"), which is plain byte order of the full relative paths: the cursor is simply the
 * last path returned, so a page can stop anywhere and the next one resumes after it.
 */
final class Sitewarden_Connector_Backup_Files {

	/** Seconds one page may spend hashing, well inside shared hosts' 30 s limits. */
	const PAGE_BUDGET = 15;

	const MAX_RANGE = 16777216;

	/** Largest file a bundle carries whole; the daemon fetches larger ones in ranges. */
	const BUNDLE_FILE_BYTES = 2097152;

	/** @var Sitewarden_Connector_Backup_Paths */
	private $paths;

	public function __construct( Sitewarden_Connector_Backup_Paths $paths ) {
		$this->paths = $paths;
	}

	/** @var array<string, array> Path → [size, mtime, sha256] the daemon already knows. */
	private $known = array();

	/**
	 * @param string $cursor Last path of the previous page ('' for the first page).
	 * @param int    $limit  Most entries in this page.
	 * @param array  $known  [path, size, mtime, sha256] from the previous backup: a file with the
	 *                       same size and mtime is not read again (as rsync decides).
	 * @return array{files: array, next: string|null}
	 */
	public function page( $cursor, $limit, $known = array() ) {
		$this->known = array();
		foreach ( (array) $known as $entry ) {
			if ( is_array( $entry ) && 4 === count( $entry ) && is_string( $entry[0] ) && is_string( $entry[3] ) && preg_match( '/^[0-9a-f]{64}$/D', $entry[3] ) ) {
				$this->known[ $entry[0] ] = array( (int) $entry[1], (int) $entry[2], $entry[3] );
			}
		}
		$files    = array();
		$deadline = microtime( true ) + self::PAGE_BUDGET;
		$done     = $this->walk( $this->paths->root(), '', (string) $cursor, $files, max( 1, (int) $limit ), $deadline );
		$last     = end( $files );
		return array(
			'files' => $files,
			'next'  => $done || false === $last ? null : $last['path'],
		);
	}

	/**
	 * @return bool True when the walk got to the end of this directory.
	 */
	private function walk( $dir, $prefix, $cursor, array &$files, $limit, $deadline ) {
		$entries = array();
		$handle  = @opendir( $dir ); // phpcs:ignore WordPress.PHP.NoSilencedErrors -- unreadable directories are skipped.
		if ( false === $handle ) {
			return true;
		}
		while ( false !== ( $name = readdir( $handle ) ) ) { // phpcs:ignore WordPress.CodeAnalysis.AssignmentInCondition
			if ( '.' === $name || '..' === $name ) {
				continue;
			}
			$absolute = $dir . '/' . $name;
			if ( is_link( $absolute ) ) {
				continue; // Symlinks are not followed: they could lead anywhere.
			}
			$is_dir = is_dir( $absolute );
			if ( ! $is_dir && ! is_file( $absolute ) ) {
				continue;
			}
			$entries[ $name . ( $is_dir ? '/' : '' ) ] = $is_dir;
		}
		closedir( $handle );
		ksort( $entries, SORT_STRING );

		foreach ( $entries as $key => $is_dir ) {
			$name     = rtrim( $key, '/' );
			$relative = $prefix . $name;
			if ( $this->paths->is_skipped( $relative ) ) {
				continue;
			}
			if ( $is_dir ) {
				$as_dir = $relative . '/';
				if ( strcmp( $as_dir, $cursor ) <= 0 && 0 !== strpos( $cursor, $as_dir ) ) {
					continue; // Entirely before the cursor.
				}
				if ( ! $this->walk( $dir . '/' . $name, $as_dir, $cursor, $files, $limit, $deadline ) ) {
					return false;
				}
				continue;
			}
			if ( strcmp( $relative, $cursor ) <= 0 ) {
				continue;
			}
			if ( count( $files ) >= $limit || ( count( $files ) > 0 && microtime( true ) > $deadline ) ) {
				return false;
			}
			$absolute = $dir . '/' . $name;
			$size     = (int) filesize( $absolute );
			$mtime    = (int) filemtime( $absolute );
			$known    = isset( $this->known[ $relative ] ) ? $this->known[ $relative ] : null;
			if ( $known && $known[0] === $size && $known[1] === $mtime ) {
				$hash = $known[2];
			} else {
				$hash = @hash_file( 'sha256', $absolute ); // phpcs:ignore WordPress.PHP.NoSilencedErrors -- an unreadable file is reported, not fatal.
			}
			$files[] = array(
				'path'   => $relative,
				'size'   => $size,
				'mtime'  => $mtime,
				'sha256' => false === $hash ? null : $hash,
			);
		}
		return true;
	}

	/**
	 * Sends many small files in one answer, so a backup does not pay one request per file:
	 * for each path in order, a line with its length ("-1": gone or unreadable, "-2": larger
	 * than BUNDLE_FILE_BYTES now) followed by that many bytes. Ends the request.
	 *
	 * @param string[] $paths
	 * @return WP_Error Only when a path is unsafe (nothing is sent then).
	 */
	public function send_bundle( $paths ) {
		$files = array();
		foreach ( (array) $paths as $path ) {
			$absolute = $this->paths->resolve( $path );
			if ( is_wp_error( $absolute ) ) {
				return $absolute;
			}
			$files[] = $this->paths->is_skipped( $path ) ? null : $absolute;
		}
		while ( ob_get_level() > 0 ) {
			ob_end_clean();
		}
		header( 'Content-Type: application/octet-stream' );
		foreach ( $files as $absolute ) {
			$size = null !== $absolute && is_file( $absolute ) && ! is_link( $absolute ) && is_readable( $absolute ) ? (int) filesize( $absolute ) : -1;
			if ( $size > self::BUNDLE_FILE_BYTES ) {
				$size = -2;
			}
			$bytes = $size >= 0 ? file_get_contents( $absolute ) : ''; // phpcs:ignore WordPress.WP.AlternativeFunctions
			if ( false === $bytes ) {
				echo "-1\n"; // phpcs:ignore WordPress.Security.EscapeOutput
				continue;
			}
			echo ( $size < 0 ? $size : strlen( $bytes ) ) . "\n" . $bytes; // phpcs:ignore WordPress.Security.EscapeOutput -- raw file bytes.
		}
		exit;
	}

	/**
	 * Sends the bytes of a file (or a range of it) as the raw answer, and ends the request.
	 *
	 * @return WP_Error Only when it cannot send anything.
	 */
	public function send( $path, $offset, $length ) {
		$absolute = $this->paths->resolve( $path );
		if ( is_wp_error( $absolute ) ) {
			return $absolute;
		}
		if ( $this->paths->is_skipped( $path ) || ! is_file( $absolute ) || is_link( $absolute ) ) {
			return new WP_Error( 'sitewarden_file_not_found', sprintf( 'There is no file %s to back up.', $path ), array( 'status' => 404 ) );
		}
		$size   = (int) filesize( $absolute );
		$offset = max( 0, (int) $offset );
		$length = min( max( 0, (int) $length ), self::MAX_RANGE, max( 0, $size - $offset ) );
		$handle = fopen( $absolute, 'rb' ); // phpcs:ignore WordPress.WP.AlternativeFunctions -- ranges need a seekable handle.
		if ( false === $handle ) {
			return new WP_Error( 'sitewarden_file_unreadable', sprintf( 'The file %s cannot be read.', $path ), array( 'status' => 500 ) );
		}
		while ( ob_get_level() > 0 ) {
			ob_end_clean();
		}
		header( 'Content-Type: application/octet-stream' );
		header( 'Content-Length: ' . $length );
		header( 'X-Sitewarden-File-Size: ' . $size );
		fseek( $handle, $offset );
		$left = $length;
		while ( $left > 0 && ! feof( $handle ) ) {
			$chunk = fread( $handle, min( 1048576, $left ) ); // phpcs:ignore WordPress.WP.AlternativeFunctions
			if ( false === $chunk || '' === $chunk ) {
				break;
			}
			echo $chunk; // phpcs:ignore WordPress.Security.EscapeOutput -- raw file bytes.
			$left -= strlen( $chunk );
		}
		fclose( $handle ); // phpcs:ignore WordPress.WP.AlternativeFunctions
		exit;
	}
}
