import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

const gunzipAsync = promisify(gunzip);

/**
 * A Lighthouse report is a page of its own with inline scripts and styles: sandboxed (an opaque
 * origin, so none of the daemon's cookies or pages are within its reach) and reaching nothing but
 * itself.
 */
export const AUDIT_REPORT_POLICY = [
  'sandbox allow-scripts allow-popups',
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  'img-src data: blob:',
  'font-src data:',
  "frame-ancestors 'none'",
].join('; ');

/**
 * The one way a stored report (kept gzipped) is served, by the API and the dashboard alike: as
 * stored to a client that takes gzip, unpacked for one that does not.
 */
export async function auditReportResponse(gzipped: Buffer, acceptEncoding: string | undefined): Promise<Response> {
  const headers = new Headers({
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': AUDIT_REPORT_POLICY,
    Vary: 'Accept-Encoding',
  });
  if (/\bgzip\b/.test(acceptEncoding ?? '')) {
    headers.set('Content-Encoding', 'gzip');
    return new Response(new Uint8Array(gzipped), { status: 200, headers });
  }
  return new Response(new Uint8Array(await gunzipAsync(gzipped)), { status: 200, headers });
}
