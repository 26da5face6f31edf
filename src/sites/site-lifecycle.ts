import { EventEmitter } from 'node:events';

/**
 * In-process notices of sites joining and leaving, so other domains (uptime, performance,
 * backups) can start or stop their work at once without the sites module knowing them.
 */
export interface SiteLifecycle {
  onConnected(listener: (siteId: string) => void): void;
  onRemoved(listener: (siteId: string) => void): void;
  connected(siteId: string): void;
  removed(siteId: string): void;
}

export function createSiteLifecycle(): SiteLifecycle {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(50);
  return {
    onConnected: (listener) => void emitter.on('connected', listener),
    onRemoved: (listener) => void emitter.on('removed', listener),
    connected: (siteId) => void emitter.emit('connected', siteId),
    removed: (siteId) => void emitter.emit('removed', siteId),
  };
}
