import { BlockList, isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';

/**
 * The client's address, one answer for everything that cares (the sign-in throttle, the API
 * token failure limiter, the sign-in events): the connection's peer address, unless that peer is a
 * trusted proxy (SITEWARDEN_TRUSTED_PROXIES); then the right-most address of `X-Forwarded-For`
 * that is not a trusted proxy. Entries left of it were written by the client and are never read:
 * a client cannot choose its own address. Without trusted proxies the header is ignored.
 */
export interface TrustedProxies {
  has(address: string): boolean;
  readonly size: number;
}

const NO_PROXIES: TrustedProxies = { has: () => false, size: 0 };
/** What a request without a socket (app.request() in tests) counts as. */
const NO_SOCKET = 'local';
/** The longest address kept from X-Forwarded-For (an IPv6 address with a zone is well below it). */
const MAX_ADDRESS_LENGTH = 64;

/** `::ffff:192.0.2.1` (an IPv4 peer of a dual-stack listener) is `192.0.2.1`, so one client has one key. */
function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1]! : address.toLowerCase();
}

/** One entry of SITEWARDEN_TRUSTED_PROXIES: an address or a CIDR range; an error message when it is neither. */
export function checkTrustedProxy(entry: string): string | null {
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return `${entry} is not an IP address or CIDR range`;
  if (bits === undefined) return null;
  const prefix = Number(bits);
  if (!/^\d{1,3}$/.test(bits) || prefix > (family === 4 ? 32 : 128)) return `${entry} has an invalid prefix length`;
  return null;
}

/** Trusted proxies from the checked entries (see checkTrustedProxy): addresses and CIDR ranges, IPv4 or IPv6. */
export function createTrustedProxies(entries: readonly string[]): TrustedProxies {
  if (entries.length === 0) return NO_PROXIES;
  const list = new BlockList();
  for (const entry of entries) {
    const [raw, bits] = entry.split('/') as [string, string | undefined];
    const address = bits === undefined ? normalizeAddress(raw) : raw;
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return {
    has(address) {
      const normal = normalizeAddress(address);
      const family = isIP(normal);
      return family !== 0 && list.check(normal, family === 6 ? 'ipv6' : 'ipv4');
    },
    size: entries.length,
  };
}

/** An X-Forwarded-For entry without a port (`192.0.2.1:443`, `[2001:db8::1]:443`) or quotes. */
function forwardedEntry(raw: string): string {
  const entry = raw.trim().replace(/^"|"$/g, '');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  if (bracketed) return normalizeAddress(bracketed[1]!);
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(entry);
  return normalizeAddress((withPort ? withPort[1]! : entry).slice(0, MAX_ADDRESS_LENGTH));
}

function peerAddress(c: Context): string | undefined {
  const address = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket
    ?.remoteAddress;
  return address ? normalizeAddress(address) : undefined;
}

/** The client's address as `trusted` proxies tell it (see TrustedProxies). */
function resolveClientAddress(c: Context, trusted: TrustedProxies): string {
  const peer = peerAddress(c);
  if (peer === undefined) return NO_SOCKET;
  if (!trusted.has(peer)) return peer;
  const forwarded = (c.req.header('x-forwarded-for') ?? '')
    .split(',')
    .map(forwardedEntry)
    .filter((entry) => entry !== '');
  // Right to left: each entry was written by the hop after it, trusted so far.
  let client = peer;
  for (let i = forwarded.length - 1; i >= 0; i--) {
    client = forwarded[i]!;
    if (!trusted.has(client)) return client;
  }
  // Every hop is a trusted proxy: the left-most is the client (or the proxy itself asked).
  return client;
}

type ClientAddressEnv = { Variables: { clientAddress?: string } };

/** Resolves the client's address once per request, for `clientAddress(c)` downstream. */
export function clientAddressMiddleware(trusted: TrustedProxies = NO_PROXIES): MiddlewareHandler {
  return async (c, next) => {
    (c as Context<ClientAddressEnv>).set('clientAddress', resolveClientAddress(c, trusted));
    await next();
  };
}

/**
 * The request's client address: as clientAddressMiddleware resolved it, or (in an app without it)
 * the connection's peer address, `X-Forwarded-For` ignored.
 */
export function clientAddress(c: Context): string {
  return (c as Context<ClientAddressEnv>).get('clientAddress') ?? resolveClientAddress(c, NO_PROXIES);
}
