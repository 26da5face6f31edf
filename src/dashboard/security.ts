import type { MiddlewareHandler } from 'hono';
import { STYLESHEET_HASH } from './stylesheet.js';

/**
 * Every dashboard answer: scripts, styles, images and connections only from this origin, no
 * inline script, no inline style but the dashboard's own stylesheet (by its hash), never framed.
 * The pages render on the server, so this costs nothing.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  `style-src 'self' '${STYLESHEET_HASH}'`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    // A page that brings its own, stricter policy keeps it: a Lighthouse report runs sandboxed.
    if (!c.res.headers.has('Content-Security-Policy')) c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'same-origin');
    c.header('Cross-Origin-Opener-Policy', 'same-origin');
    c.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=()');
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  };
}
