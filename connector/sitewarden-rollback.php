<?php
/**
 * Sitewarden's standalone rollback path: puts back a plugin or theme folder the connector saved
 * before an update, WITHOUT loading WordPress, its plugins or its theme, so it still works when
 * every WordPress request ends in a fatal error. Threat model: docs/safe-updates.md.
 *
 * It does one thing. POST, JSON body, header X-Sitewarden-Rollback-Secret:
 *   {"action": "status"}                                   → which saved copies exist
 *   {"action": "restore", "id": "…", "target": "plugins/x"} → swap the saved copy `id` back in
 *   {"action": "version", "target": "plugins/x/x.php"}     → the version on disk (since 1.7.0), read from
 *     the plugin's main file or (target themes/<folder>) the theme's style.css header, as WordPress reads it
 *   (targets: plugins/<folder>, themes/<folder>, or core: wp-admin, wp-includes and the root's PHP files)
 * The secret is checked in constant time against the SHA-256 the daemon provisioned (through the
 * authenticated connector) in wp-content/sitewarden-rollback/secret.php; the site never holds the
 * secret itself. A restore names a saved copy and the exact target it was saved from; anything
 * else is refused. Requests are rate-limited before anything else happens.
 *
 * @package Sitewarden_Connector
 */

// Never let WordPress (or anything else) include this file: it is an endpoint only.
if ( defined( 'ABSPATH' ) || PHP_SAPI === 'cli' ) {
	return;
}

final class Sitewarden_Rollback_Endpoint {

	/** Requests (any, before authentication) allowed per window. */
	const RATE_LIMIT = 30;
	const RATE_WINDOW_SECONDS = 60;
	const MAX_BODY_BYTES = 4096;
	const ID_PATTERN = '/^[0-9]{14}-[0-9a-f]{8}$/D';
	const TARGET_PATTERN = '#^(plugins|themes)/[A-Za-z0-9._-]{1,200}$#D';
	/** A plugin's main file (plugins/<folder>/<file>.php or plugins/<file>.php) or a theme's folder. */
	const VERSION_TARGET_PATTERN = '#^(plugins/([A-Za-z0-9._-]{1,200}/)?[A-Za-z0-9._-]{1,200}\.php|themes/[A-Za-z0-9._-]{1,200})$#D';
	/** WordPress reads a header from a file's first 8 KiB (get_file_data). */
	const HEADER_BYTES = 8192;

	/** @var string wp-content, found from this file's place: wp-content/plugins/sitewarden-connector/. */
	private $content_dir;

	/** @var string */
	private $store;

	public function __construct() {
		$this->content_dir = dirname( __DIR__, 2 );
		$this->store       = $this->content_dir . '/sitewarden-rollback';
	}

	public function handle() {
		header( 'Cache-Control: no-store' );
		header( 'X-Robots-Tag: noindex' );
		if ( 'POST' !== ( $_SERVER['REQUEST_METHOD'] ?? '' ) ) {
			header( 'Allow: POST' );
			return $this->answer( 405, array( 'code' => 'method_not_allowed' ) );
		}
		if ( ! $this->within_rate_limit() ) {
			header( 'Retry-After: ' . self::RATE_WINDOW_SECONDS );
			return $this->answer( 429, array( 'code' => 'rate_limited' ) );
		}
		if ( ! $this->authenticated() ) {
			return $this->answer( 401, array( 'code' => 'unauthorized' ) );
		}

		$raw = file_get_contents( 'php://input', false, null, 0, self::MAX_BODY_BYTES + 1 );
		if ( false === $raw || strlen( $raw ) > self::MAX_BODY_BYTES ) {
			return $this->answer( 413, array( 'code' => 'body_too_large' ) );
		}
		$request = json_decode( $raw, true );
		if ( ! is_array( $request ) || ! isset( $request['action'] ) || ! is_string( $request['action'] ) ) {
			return $this->answer( 400, array( 'code' => 'bad_request' ) );
		}

		if ( 'status' === $request['action'] ) {
			return $this->answer( 200, array( 'saved' => $this->saved_ids() ) );
		}
		if ( 'restore' === $request['action'] ) {
			return $this->restore( $request );
		}
		if ( 'version' === $request['action'] ) {
			return $this->version( $request );
		}
		return $this->answer( 400, array( 'code' => 'unknown_action' ) );
	}

	/**
	 * @param array $request
	 */
	private function restore( array $request ) {
		$id     = isset( $request['id'] ) && is_string( $request['id'] ) ? $request['id'] : '';
		$target = isset( $request['target'] ) && is_string( $request['target'] ) ? $request['target'] : '';
		if ( ! preg_match( self::ID_PATTERN, $id ) || ! $this->safe_target( $target ) ) {
			return $this->answer( 400, array( 'code' => 'bad_request' ) );
		}

		$saved    = $this->store . '/' . $id;
		$manifest = $this->read_manifest( $saved );
		// Only what was saved, back where it was saved from: the target must be the manifest's own.
		if ( null === $manifest || ! hash_equals( $manifest['target'], $target ) ) {
			return $this->answer( 404, array( 'code' => 'not_saved' ) );
		}

		$previous = $saved . '/previous';
		if ( ! empty( $manifest['restoredAt'] ) && ! file_exists( $previous ) ) {
			return $this->answer( 200, array( 'restored' => $target, 'already' => true ) );
		}
		if ( ! file_exists( $previous ) ) {
			return $this->answer( 409, array( 'code' => 'saved_copy_missing' ) );
		}

		if ( 'core' === $target ) {
			// WordPress's own files, one by one, from the saved copy's own listing (never wp-config.php or wp-content).
			$root  = dirname( $this->content_dir );
			$aside = $saved . '/replaced-' . time();
			mkdir( $aside, 0750 );
			foreach ( (array) scandir( $previous ) as $name ) {
				if ( '.' === $name || '..' === $name ) {
					continue;
				}
				if ( ! preg_match( '/^(wp-admin|wp-includes|[A-Za-z0-9._-]+\.php)$/D', $name ) || 'wp-config.php' === $name ) {
					return $this->answer( 409, array( 'code' => 'unexpected_saved_file' ) );
				}
				if ( ( file_exists( $root . '/' . $name ) && ! rename( $root . '/' . $name, $aside . '/' . $name ) ) || ! rename( $previous . '/' . $name, $root . '/' . $name ) ) {
					return $this->answer( 500, array( 'code' => 'restore_failed' ) );
				}
			}
			rmdir( $previous );
		} else {
			// The broken version is moved aside (kept for a post-mortem), then the saved one put back.
			$destination = $this->content_dir . '/' . $target;
			if ( file_exists( $destination ) || is_link( $destination ) ) {
				if ( ! rename( $destination, $saved . '/replaced-' . time() ) ) {
					return $this->answer( 500, array( 'code' => 'move_failed' ) );
				}
			}
			if ( ! rename( $previous, $destination ) ) {
				return $this->answer( 500, array( 'code' => 'restore_failed' ) );
			}
		}
		$manifest['restoredAt'] = time();
		file_put_contents( $saved . '/manifest.json', json_encode( $manifest ), LOCK_EX );

		// An update interrupted halfway leaves the site in maintenance mode.
		$maintenance = dirname( $this->content_dir ) . '/.maintenance';
		if ( is_file( $maintenance ) ) {
			unlink( $maintenance );
		}
		if ( function_exists( 'opcache_reset' ) ) {
			opcache_reset();
		}
		return $this->answer( 200, array( 'restored' => $target, 'already' => false ) );
	}

	/**
	 * What is on disk now, without WordPress: after an update whose request failed, or after which
	 * WordPress fails, this tells whether the new version landed. `version` is null when the file is
	 * missing or has no Version header.
	 *
	 * @param array $request
	 */
	private function version( array $request ) {
		$target = isset( $request['target'] ) && is_string( $request['target'] ) ? $request['target'] : '';
		if ( ! preg_match( self::VERSION_TARGET_PATTERN, $target ) || false !== strpos( $target, '..' ) ) {
			return $this->answer( 400, array( 'code' => 'bad_request' ) );
		}
		$file    = $this->content_dir . '/' . $target . ( 0 === strpos( $target, 'themes/' ) ? '/style.css' : '' );
		$version = null;
		$head    = is_file( $file ) ? file_get_contents( $file, false, null, 0, self::HEADER_BYTES ) : false;
		// As get_file_data() and _cleanup_header_comment() read it.
		if ( is_string( $head ) && preg_match( '/^(?:[ \t]*<\?php)?[ \t\/*#@]*Version:(.*)$/mi', str_replace( "\r", "\n", $head ), $match ) ) {
			$version = substr( trim( preg_replace( '/\s*(?:\*\/|\?>).*/', '', $match[1] ) ), 0, 64 );
			if ( '' === $version ) {
				$version = null;
			}
		}
		return $this->answer(
			200,
			array(
				'target'  => $target,
				'version' => $version,
			)
		);
	}

	private function safe_target( $target ) {
		if ( 'core' === $target ) {
			return true;
		}
		if ( ! preg_match( self::TARGET_PATTERN, $target ) ) {
			return false;
		}
		$name = substr( $target, strpos( $target, '/' ) + 1 );
		return '.' !== $name && '..' !== $name && false === strpos( $name, '..' );
	}

	/**
	 * @param string $saved
	 * @return array|null
	 */
	private function read_manifest( $saved ) {
		$file = $saved . '/manifest.json';
		if ( ! is_file( $file ) || is_link( $saved ) || filesize( $file ) > 4096 ) {
			return null;
		}
		$manifest = json_decode( (string) file_get_contents( $file ), true );
		if ( ! is_array( $manifest ) || ! isset( $manifest['target'] ) || ! is_string( $manifest['target'] ) || ! $this->safe_target( $manifest['target'] ) ) {
			return null;
		}
		return $manifest;
	}

	private function saved_ids() {
		$ids = array();
		foreach ( (array) glob( $this->store . '/*/manifest.json' ) as $file ) {
			$id       = basename( dirname( $file ) );
			$manifest = preg_match( self::ID_PATTERN, $id ) ? $this->read_manifest( dirname( $file ) ) : null;
			if ( null !== $manifest ) {
				$ids[] = array(
					'id'       => $id,
					'target'   => $manifest['target'],
					'restored' => ! empty( $manifest['restoredAt'] ),
				);
			}
		}
		return $ids;
	}

	private function authenticated() {
		$given = isset( $_SERVER['HTTP_X_SITEWARDEN_ROLLBACK_SECRET'] ) ? (string) $_SERVER['HTTP_X_SITEWARDEN_ROLLBACK_SECRET'] : '';
		$file  = $this->store . '/secret.php';
		if ( '' === $given || strlen( $given ) > 256 || ! is_file( $file ) ) {
			return false;
		}
		$expected = include $file;
		if ( ! is_string( $expected ) || ! preg_match( '/^[0-9a-f]{64}$/D', $expected ) ) {
			return false;
		}
		return hash_equals( $expected, hash( 'sha256', $given ) );
	}

	/**
	 * A fixed window shared by every caller: the secret has 256 bits, so this bounds the work an
	 * attacker can make the site do, not the odds of guessing.
	 */
	private function within_rate_limit() {
		if ( ! is_dir( $this->store ) ) {
			return true;
		}
		$handle = fopen( $this->store . '/rate.json', 'c+' );
		if ( false === $handle ) {
			return false;
		}
		flock( $handle, LOCK_EX );
		$state = json_decode( (string) stream_get_contents( $handle ), true );
		$now   = time();
		if ( ! is_array( $state ) || ! isset( $state['start'], $state['count'] ) || $now - (int) $state['start'] >= self::RATE_WINDOW_SECONDS ) {
			$state = array(
				'start' => $now,
				'count' => 0,
			);
		}
		++$state['count'];
		ftruncate( $handle, 0 );
		rewind( $handle );
		fwrite( $handle, json_encode( $state ) );
		flock( $handle, LOCK_UN );
		fclose( $handle );
		return $state['count'] <= self::RATE_LIMIT;
	}

	private function answer( $status, array $body ) {
		http_response_code( $status );
		header( 'Content-Type: application/json' );
		echo json_encode( $body );
	}
}

( new Sitewarden_Rollback_Endpoint() )->handle();
