import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startDaemon, type RunningDaemon } from '../../src/main.js';

/** Sends raw bytes to the daemon and reads its whole answer (it closes the connection after an error). */
function rawRequest(
  port: number,
  bytes: string,
): Promise<{ statusLine: string; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ statusLine, headers, body });
    });
    socket.write(bytes);
  });
}

describe('requests Node refuses before the app sees them', () => {
  let daemon: RunningDaemon;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-limits-'));
    daemon = await startDaemon(
      loadConfig({ SITEWARDEN_DATA_DIR: dataDir, SITEWARDEN_PORT: '0', SITEWARDEN_HOST: '127.0.0.1' }),
      pino({ level: 'silent' }),
    );
  });
  afterAll(async () => {
    await daemon?.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a 64 KB header with a 431 problem document', async () => {
    const answer = await rawRequest(
      daemon.port,
      `GET /api/sites HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(64 * 1024)}\r\n\r\n`,
    );
    expect(answer.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
    expect(JSON.parse(answer.body)).toMatchObject({
      type: '/problems/request-headers-too-large',
      title: 'Request header fields too large',
      status: 431,
    });
  });

  it('answers a request that is not HTTP with a 400 problem document', async () => {
    const answer = await rawRequest(daemon.port, 'HELLO\x00 THERE\r\n\r\n');
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ type: '/problems/malformed-request', status: 400 });
  });

  it('still answers ordinary requests', async () => {
    const answer = await rawRequest(
      daemon.port,
      'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    expect(answer.statusLine).toBe('HTTP/1.1 200 OK');
  });
});
