import { EventEmitter } from 'node:events';

/**
 * In-process notices of sites joining and leaving, so other domains (uptime, performance,
 * backups) can start or stop their work at once without the sites module knowing them. A site
 * connected comes with what its listeners need of it, so none reads it back.
 */
export interface ConnectedSiteNotice {
  id: string;
  url: string;
}

export interface SiteLifecycle {
  onConnected(listener: (site: ConnectedSiteNotice) => void): void;
  onRemoved(listener: (siteId: string) => void): void;
  connected(site: ConnectedSiteNotice): void;
  removed(siteId: string): void;
}

export function createSiteLifecycle(): SiteLifecycle {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(50);
  return {
    onConnected: (listener) => void emitter.on('connected', listener),
    onRemoved: (listener) => void emitter.on('removed', listener),
    connected: (site) => void emitter.emit('connected', { id: site.id, url: site.url }),
    removed: (siteId) => void emitter.emit('removed', siteId),
  };
}
