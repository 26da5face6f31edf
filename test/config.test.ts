import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('has sane defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      logLevel: 'info',
      publicUrl: 'http://127.0.0.1:8080',
      siteConcurrency: 4,
    });
    expect(config.dataDir.endsWith('/data')).toBe(true);
  });

  it('stops with one clear line naming the bad variable', () => {
    expect(() => loadConfig({ SITEWARDEN_PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ SITEWARDEN_PORT: '70000' })).toThrow(/SITEWARDEN_PORT/);
    expect(() => loadConfig({ SITEWARDEN_LOG_LEVEL: 'loud' })).toThrow(/SITEWARDEN_LOG_LEVEL must be one of/);
    expect(() => loadConfig({ SITEWARDEN_PUBLIC_URL: 'ftp://x' })).toThrow(/SITEWARDEN_PUBLIC_URL/);
    expect(() => loadConfig({ SITEWARDEN_SITE_CONCURRENCY: '0' })).toThrow(
      /SITEWARDEN_SITE_CONCURRENCY must be at least 1/,
    );
  });

  it('reads the metrics listener as host:port, IPv6 in brackets', () => {
    expect(loadConfig({}).metricsListen).toBeNull();
    expect(loadConfig({ SITEWARDEN_METRICS_LISTEN: '127.0.0.1:9464' }).metricsListen).toEqual({
      host: '127.0.0.1',
      port: 9464,
    });
    expect(loadConfig({ SITEWARDEN_METRICS_LISTEN: '[::1]:9464' }).metricsListen).toEqual({ host: '::1', port: 9464 });
    expect(() => loadConfig({ SITEWARDEN_METRICS_LISTEN: '9464' })).toThrow(
      /SITEWARDEN_METRICS_LISTEN must be host:port/,
    );
    expect(() => loadConfig({ SITEWARDEN_METRICS_LISTEN: '::1:9464' })).toThrow(
      /SITEWARDEN_METRICS_LISTEN must be host:port/,
    );
    expect(() => loadConfig({ SITEWARDEN_METRICS_LISTEN: 'localhost:99999' })).toThrow(
      /SITEWARDEN_METRICS_LISTEN must end with a port number/,
    );
  });

  it('derives the public URL from the listen address unless given', () => {
    expect(loadConfig({ SITEWARDEN_HOST: '::1', SITEWARDEN_PORT: '9000' }).publicUrl).toBe('http://[::1]:9000');
    expect(loadConfig({ SITEWARDEN_PUBLIC_URL: 'https://sitewarden.example.org/' }).publicUrl).toBe(
      'https://sitewarden.example.org',
    );
  });
});
