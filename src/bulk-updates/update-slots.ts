/**
 * The slots every bulk update shares: at most `concurrency` site updates at once in the whole
 * daemon, and at most `perHost` of them on one host (sites on one server share its CPU and disk).
 * Bulk jobs take a slot before they start a site and wait on `released()` when none is free.
 */
export function createUpdateSlots({ concurrency, perHost }: { concurrency: number; perHost: number }) {
  let running = 0;
  const hosts = new Map<string, number>();
  let wake: (() => void) | undefined;
  let released: Promise<void> | undefined;

  return {
    /** Takes a slot for a site on `host` if one is free. */
    tryTake(host: string): boolean {
      const onHost = hosts.get(host) ?? 0;
      if (running >= concurrency || onHost >= perHost) return false;
      running++;
      hosts.set(host, onHost + 1);
      return true;
    },
    release(host: string): void {
      running--;
      const onHost = (hosts.get(host) ?? 1) - 1;
      if (onHost <= 0) hosts.delete(host);
      else hosts.set(host, onHost);
      wake?.();
      wake = undefined;
      released = undefined;
    },
    /** Settles at the next release of any slot. */
    released(): Promise<void> {
      released ??= new Promise<void>((resolve) => (wake = resolve));
      return released;
    },
  };
}

export type UpdateSlots = ReturnType<typeof createUpdateSlots>;

/** Sites on one host share its limit: the host is the hostname of the site's URL. */
export const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return url;
  }
};
