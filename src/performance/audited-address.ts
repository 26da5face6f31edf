/**
 * Where Chromium may reach an audited host: the host resolved and checked against the network policy
 * before any browser starts, so that Chromium is pinned to the address allowed.
 */
import { isIP } from 'node:net';
import { isAddressNotAllowed, type NetworkPolicy } from '../shared/network-policy.js';
import type { AuditFailureReason } from './performance.table.js';

/**
 * The address to pin Chromium to (`null` when the URL's host is an IP address already), or why the
 * audit cannot run: `address_not_allowed` when the policy refuses it, `page_unreachable` when the name
 * does not resolve.
 */
export async function auditedAddress(
  network: NetworkPolicy,
  url: string,
): Promise<{ ok: true; address: string | null } | { ok: false; reason: AuditFailureReason; message: string }> {
  const host = new URL(url).hostname;
  try {
    const [first] = await network.resolve(host);
    return { ok: true, address: isIP(host.replace(/^\[|\]$/g, '')) ? null : first!.address };
  } catch (error) {
    if (isAddressNotAllowed(error)) return { ok: false, reason: 'address_not_allowed', message: error.message };
    return { ok: false, reason: 'page_unreachable', message: `${host}: ${(error as Error).message}` };
  }
}
