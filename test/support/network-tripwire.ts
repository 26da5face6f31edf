import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

/**
 * Fails loudly, before anything leaves the process, when code tries to resolve a name or open a
 * socket to anything but loopback. Installed by tests that feed generated input to the daemon,
 * where one unlucky value could otherwise make it reach out to the Internet.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined || host === '' || host === 'localhost') return true;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (net.isIPv4(bare)) return bare.startsWith('127.');
  if (net.isIPv6(bare)) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}

export interface NetworkTripwire {
  /** Every refused attempt, as `kind host`. */
  violations: string[];
  /** What a permitted connect calls: swapped only by the tripwire's own self-test. */
  passThrough: (socket: net.Socket, args: unknown[]) => net.Socket;
  /** What a permitted name lookup calls: likewise. */
  passThroughLookup: (original: (...args: unknown[]) => unknown, thisArg: unknown, args: unknown[]) => unknown;
  uninstall(): void;
}

export function installNetworkTripwire(): NetworkTripwire {
  const originalConnect = net.Socket.prototype.connect;
  const tripwire: NetworkTripwire = {
    violations: [],
    passThrough: (socket, args) => (originalConnect as (...args: unknown[]) => net.Socket).apply(socket, args),
    passThroughLookup: (original, thisArg, args) => original.apply(thisArg, args),
    uninstall,
  };
  const refuse = (kind: string, host: string | undefined) => {
    if (isLoopbackHost(host)) return;
    tripwire.violations.push(`${kind} ${host}`);
    throw new Error(`network tripwire: ${kind} ${host} is not loopback`);
  };

  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    // net.connect() passes its arguments already normalised, as an array [options, callback].
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    if (typeof first === 'object' && first !== null) {
      const options = first as { host?: string; path?: string };
      if (options.path === undefined) refuse('connect', options.host);
    } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
      refuse('connect', typeof args[1] === 'string' ? args[1] : undefined);
    }
    return tripwire.passThrough(this, args);
  } as typeof net.Socket.prototype.connect;

  const restore: (() => void)[] = [() => (net.Socket.prototype.connect = originalConnect)];
  const guardName = (target: Record<string, unknown>, name: string, kind: string) => {
    const original = target[name] as (...args: unknown[]) => unknown;
    if (typeof original !== 'function') return;
    target[name] = function guarded(this: unknown, host: string, ...rest: unknown[]) {
      refuse(kind, host);
      return tripwire.passThroughLookup(original, this, [host, ...rest]);
    };
    restore.push(() => (target[name] = original));
  };
  for (const name of [
    'lookup',
    'lookupService',
    'resolve',
    'resolve4',
    'resolve6',
    'resolveAny',
    'resolveCname',
    'resolveMx',
    'resolveTxt',
    'resolveSrv',
    'resolveNs',
  ]) {
    guardName(dns as unknown as Record<string, unknown>, name, `dns.${name}`);
    guardName(dns.promises as unknown as Record<string, unknown>, name, `dns.promises.${name}`);
  }
  // Modules that imported `lookup` by name see the guarded one too.
  syncBuiltinESMExports();

  function uninstall() {
    for (const undo of restore.reverse()) undo();
    syncBuiltinESMExports();
  }
  return tripwire;
}
