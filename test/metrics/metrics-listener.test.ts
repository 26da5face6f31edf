import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOnce, startDaemonProcess } from '../support/daemon-process.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { freePort } from '../support/served-app.js';
import { fetchWhole } from '../support/fetch-whole.js';

beforeAll(() => buildOnce(), 120_000);

async function stop(daemon: Awaited<ReturnType<typeof startDaemonProcess>>) {
  daemon.child.kill('SIGTERM');
  expect(await daemon.exited).toBe(0);
}

describe('the daemon process serving health and metrics', () => {
  it('answers /healthz and /readyz, and /metrics with a token on the main listener', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-metrics-'));
    const daemon = await startDaemonProcess({ SITEWARDEN_DATA_DIR: dataDir });
    try {
      const base = `http://127.0.0.1:${daemon.port}`;
      const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
      expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { checks: { ok: boolean }[] }).checks.every((check) => check.ok)).toBe(true);

      expect((await fetchWhole(`${base}/metrics`)).status).toBe(401);
      expect((await fetchWhole(`${base}/api/sites`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(
        200,
      );
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(metrics.status).toBe(200);
      const families = parsePrometheusText(await metrics.text());
      expect(
        sampleValue(families, 'sitewarden_http_request_duration_seconds_count', {
          method: 'GET',
          route: '/api/sites',
          status: '2xx',
        }),
      ).toBe(1);
      expect(families.get('process_cpu_seconds_total')?.type).toBe('counter');
    } finally {
      await stop(daemon);
    }
  }, 60_000);

  it('serves /metrics without a token on SITEWARDEN_METRICS_LISTEN, and not on the main listener', async () => {
    const metricsPort = await freePort();
    const daemon = await startDaemonProcess({
      SITEWARDEN_DATA_DIR: mkdtempSync(join(tmpdir(), 'sitewarden-metrics-')),
      SITEWARDEN_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
    });
    try {
      const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(scraped.status).toBe(200);
      expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(parsePrometheusText(await scraped.text()).get('sitewarden_sites')?.type).toBe('gauge');
      expect((await fetchWhole(`http://127.0.0.1:${metricsPort}/api/sites`)).status).toBe(404);
      const main = await fetch(`http://127.0.0.1:${daemon.port}/metrics`);
      expect(main.status).toBe(404);
    } finally {
      await stop(daemon);
    }
  }, 60_000);
});
