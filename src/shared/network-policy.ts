import dns, { type LookupAddress } from 'node:dns';
import type { Agent as HttpAgent } from 'node:http';
import net, { BlockList } from 'node:net';
import { defineProblem } from './errors.js';

/**
 * The network boundary: which addresses the daemon may connect to for sites, their redirects, uptime
 * probes, audits and screenshots, and webhooks. Public addresses always; loopback, private, CGNAT,
 * link-local, cloud metadata, unspecified, multicast, broadcast and reserved ones only when
 * SITEWARDEN_ALLOWED_NETWORKS lists them (a CIDR or address) or the host name asked for.
 *
 * Checked on the resolved address, when each connection is made (every redirect hop makes its own), and
 * the connection goes to exactly the address checked: no second lookup a DNS-rebinding answer could change.
 */

/** What kind of address one is; everything but `public` is refused unless allowed. */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

type Family = 'ipv4' | 'ipv6';

/** Most specific first: metadata before link-local and private, which contain it. */
const RANGES: [AddressClass, string, number, Family][] = [
  ['metadata', '169.254.169.254', 32, 'ipv4'],
  ['metadata', 'fd00:ec2::254', 128, 'ipv6'],
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['cgnat', '100.64.0.0', 10, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['broadcast', '255.255.255.255', 32, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  // IPv4-compatible addresses (deprecated) and the discard prefix: nothing public lives there.
  ['reserved', '::', 96, 'ipv6'],
  ['reserved', '100::', 64, 'ipv6'],
  // NAT64's local-use prefix; the well-known 64:ff9b::/96 is classified by the IPv4 address it carries.
  ['private', '64:ff9b:1::', 48, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['private', 'fec0::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
];

/** One list per range, checked in RANGES' order: the first that holds an address names its class. */
const classLists: [AddressClass, BlockList][] = RANGES.map(([kind, address, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(address, prefix, family);
  return [kind, list];
});

/**
 * An IP address as it is connected to: the zone of a scoped IPv6 address dropped, an IPv4 address
 * carried in IPv6 (`::ffff:a.b.c.d`, NAT64's `64:ff9b::a.b.c.d`) as that IPv4 address. Null: not an IP address.
 */
function normaliseAddress(input: string): { address: string; family: Family } | null {
  const bare = input.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (net.isIPv4(bare)) return { address: bare, family: 'ipv4' };
  if (!net.isIPv6(bare)) return null;
  const embedded = embeddedIpv4(bare);
  return embedded ? { address: embedded, family: 'ipv4' } : { address: bare.toLowerCase(), family: 'ipv6' };
}

function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (!groups) return null;
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
  if (!mapped && !nat64) return null;
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function expandIpv6(address: string): number[] | null {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const bytes = dotted[1]!.split('.').map(Number);
    text = `${text.slice(0, -dotted[1]!.length)}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const first = parse(head);
  const last = tail === undefined ? [] : parse(tail);
  const missing = 8 - first.length - last.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  return [...first, ...new Array<number>(missing).fill(0), ...last];
}

/** The class of an IP address (IPv4, IPv6, IPv4-mapped IPv6); throws on something that is not an IP address. */
export function classifyAddress(input: string): AddressClass {
  const normal = normaliseAddress(input);
  if (!normal) throw new TypeError(`${input} is not an IP address`);
  for (const [kind, list] of classLists) if (list.check(normal.address, normal.family)) return kind;
  return 'public';
}

/** Thrown (or handed to a connection's callback) when a connection would go to an address the policy refuses. */
export class AddressNotAllowed extends Error {
  override readonly name = 'AddressNotAllowed';
  readonly code = 'ERR_ADDRESS_NOT_ALLOWED';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly addressClass: AddressClass,
  ) {
    const where = host === address ? host : net.isIP(host) ? `${host} (${address})` : `${host} resolves to ${address}`;
    super(
      `${where}: a ${addressClass} address, which Sitewarden does not connect to unless SITEWARDEN_ALLOWED_NETWORKS allows it`,
    );
  }
}

export const isAddressNotAllowed = (error: unknown): error is AddressNotAllowed => error instanceof AddressNotAllowed;

/** The API's answer to a request that would have made Sitewarden connect to a refused address. */
export const networkProblems = {
  addressNotAllowed: defineProblem('address-not-allowed', 422, 'Sitewarden does not connect to that address'),
};

/** `address-not-allowed`, with the host, the address and its class. */
export const addressNotAllowedProblem = (refused: AddressNotAllowed) =>
  networkProblems.addressNotAllowed.create(
    refused.message,
    { host: refused.host, address: refused.address, addressClass: refused.addressClass },
    { cause: refused },
  );

type LookupCallback = (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;
/** dns.lookup with `{ all: true }`'s shape; tests pass a stub that answers what they need. */
export type Resolver = (hostname: string, callback: LookupCallback) => void;

const systemResolver: Resolver = (hostname, callback) =>
  dns.lookup(hostname, { all: true, verbatim: true }, (error, addresses) => callback(error, addresses ?? []));

export interface NetworkPolicy {
  /** Throws AddressNotAllowed when `host` (as asked for) may not be reached at `address`. */
  check(host: string, address: string): void;
  /**
   * The addresses `host` (a name or an IP literal) may be reached at: its resolver's answers minus the refused ones.
   * Rejects with AddressNotAllowed when none is left, or with the resolver's own error (ENOTFOUND…).
   */
  resolve(host: string): Promise<LookupAddress[]>;
  /**
   * Makes every connection `agent` opens go through `resolve` first, to exactly the addresses it allowed; a refused
   * one fails its request with AddressNotAllowed before any socket exists. Returns the agent.
   */
  guard<A extends HttpAgent>(agent: A): A;
}

/**
 * Parses SITEWARDEN_ALLOWED_NETWORKS: comma-separated CIDRs (`10.0.0.0/8`, `fd00::/8`), addresses (`192.168.1.20`),
 * host names (`wp.internal`) and host-name suffixes (`*.internal`). Throws a message naming the bad entry.
 */
export function parseAllowedNetworks(value: string): string[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) allowEntry(entry);
  return entries;
}

type AllowEntry =
  | { kind: 'subnet'; address: string; prefix: number; family: Family }
  | { kind: 'host'; name: string }
  | { kind: 'suffix'; suffix: string };

function allowEntry(entry: string): AllowEntry {
  const [base, prefixText, ...rest] = entry.split('/');
  const normal = normaliseAddress(base!);
  if (normal) {
    const max = normal.family === 'ipv4' ? 32 : 128;
    const mappedShift = normal.family === 'ipv4' && !net.isIPv4(base!.replace(/^\[(.*)\]$/, '$1')) ? 96 : 0;
    const prefix = prefixText === undefined ? max : Number(prefixText) - mappedShift;
    if (rest.length > 0 || !/^\d+$/.test(prefixText ?? `${max}`) || prefix < 0 || prefix > max)
      throw new Error(`${entry} is not a CIDR (its prefix length must be 0–${max})`);
    return { kind: 'subnet', address: normal.address, prefix, family: normal.family };
  }
  const name = entry.toLowerCase().replace(/\.$/, '');
  if (
    prefixText === undefined &&
    /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name)
  )
    return name.startsWith('*.') ? { kind: 'suffix', suffix: name.slice(1) } : { kind: 'host', name };
  throw new Error(`${entry} is neither a CIDR, an IP address nor a host name`);
}

export function createNetworkPolicy({
  allowed = [],
  resolver = systemResolver,
}: {
  /** Entries as parseAllowedNetworks returns them. */
  allowed?: readonly string[];
  resolver?: Resolver;
} = {}): NetworkPolicy {
  const subnets = new BlockList();
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of allowed.map(allowEntry)) {
    if (entry.kind === 'subnet') subnets.addSubnet(entry.address, entry.prefix, entry.family);
    else if (entry.kind === 'host') hosts.add(entry.name);
    else suffixes.push(entry.suffix);
  }
  const hostAllowed = (host: string) => {
    const name = host.toLowerCase().replace(/\.$/, '');
    return hosts.has(name) || suffixes.some((suffix) => name.endsWith(suffix));
  };

  /** Null when allowed, else the refusal. */
  function verdict(host: string, address: string): AddressNotAllowed | null {
    const normal = normaliseAddress(address);
    if (!normal) return new AddressNotAllowed(host, address, 'reserved');
    const kind = classifyAddress(normal.address);
    if (kind === 'public' || subnets.check(normal.address, normal.family)) return null;
    // A listed host name may be anywhere but at the cloud's metadata address: that takes a CIDR naming it.
    if (kind !== 'metadata' && hostAllowed(host)) return null;
    return new AddressNotAllowed(host, normal.address, kind);
  }

  function resolve(host: string): Promise<LookupAddress[]> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    const literal = net.isIP(bare.replace(/%.*$/, ''));
    if (literal !== 0) {
      const refused = verdict(bare, bare);
      return refused ? Promise.reject(refused) : Promise.resolve([{ address: bare, family: literal }]);
    }
    return new Promise((resolveAddresses, reject) => {
      resolver(bare, (error, addresses) => {
        if (error) return reject(error);
        const refusals: AddressNotAllowed[] = [];
        const usable = addresses.filter(({ address }) => {
          const refused = verdict(bare, address);
          if (refused) refusals.push(refused);
          return refused === null;
        });
        if (usable.length > 0) return resolveAddresses(usable);
        reject(
          refusals[0] ?? Object.assign(new Error(`the host name ${bare} does not resolve`), { code: 'ENOTFOUND' }),
        );
      });
    });
  }

  function guard<A extends HttpAgent>(agent: A): A {
    const original = (agent as unknown as { createConnection: ConnectionFactory }).createConnection;
    const guarded: ConnectionFactory = (options, created = () => undefined) => {
      resolve(options.host ?? 'localhost').then(
        (addresses) => {
          let socket: net.Socket | undefined;
          try {
            // No callback: net.createConnection would take it for a connect listener.
            socket = original.call(agent, { ...options, lookup: pinnedLookup(addresses) });
          } catch (error) {
            return created(error as Error);
          }
          created(null, socket);
        },
        (error: Error) => created(error),
      );
      return undefined;
    };
    (agent as unknown as { createConnection: ConnectionFactory }).createConnection = guarded;
    return agent;
  }

  return {
    check(host, address) {
      const refused = verdict(host, address);
      if (refused) throw refused;
    },
    resolve,
    guard,
  };
}

type ConnectionFactory = (
  options: net.NetConnectOpts & { host?: string },
  created?: (error: Error | null, socket?: net.Socket) => void,
) => net.Socket | undefined;

/** A `lookup` for net/tls that answers only the addresses already checked: the connection cannot go elsewhere. */
function pinnedLookup(addresses: LookupAddress[]) {
  return (
    _hostname: string,
    options: { all?: boolean; family?: number | string } | number,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    const wanted = typeof options === 'number' ? options : Number(String(options.family ?? 0).replace('IPv', ''));
    const matching = addresses.filter((entry) => !wanted || entry.family === wanted);
    if (matching.length === 0)
      return callback(Object.assign(new Error('no address of the family asked for'), { code: 'ENOTFOUND' }), '');
    if (typeof options === 'object' && options.all) return callback(null, matching);
    callback(null, matching[0]!.address, matching[0]!.family);
  };
}

/** Loopback allowed besides public addresses: the test harness and the benchmarks, whose sites are all on 127.0.0.1. */
export const LOOPBACK_NETWORKS = ['127.0.0.0/8', '::1'] as const;
