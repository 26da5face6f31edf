import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createEvents, type PublishedEvent } from '../../src/shared/event-bus.js';
import { createLoggedEvents, createLogger } from '../../src/shared/logger.js';

const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() });
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function capturedLogger(level: 'info' | 'error') {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}

describe('the in-process event bus', () => {
  it('hands every emitted event to subscribers at its catalogued level, whatever the log level', async () => {
    const events = createLoggedEvents(createLogger({ level: 'error', destination: discard() }));
    const received: PublishedEvent[] = [];
    events.subscribe((event) => received.push(event));

    events.emit('token.created', { tokenId: 'tok_1', name: 'ci', scope: 'read' });
    events.emit('site.sync_failed', { siteId: 'site_1', url: 'http://127.0.0.1:1', reason: 'connect' });
    await settle();

    expect(received).toEqual([
      { event: 'token.created', level: 'info', fields: { tokenId: 'tok_1', name: 'ci', scope: 'read' } },
      {
        event: 'site.sync_failed',
        level: 'warn',
        fields: { siteId: 'site_1', url: 'http://127.0.0.1:1', reason: 'connect' },
      },
    ]);
  });

  it('logs each event before emit returns, as { event, ...fields } at its level, the message defaulting to its name', () => {
    const { logger, lines } = capturedLogger('info');
    const events = createLoggedEvents(logger);

    events.emit('site.sync_failed', { siteId: 'site_1', url: 'http://127.0.0.1:1', reason: 'connect' });
    expect(lines).toHaveLength(1);
    events.emit('token.bootstrap_created', { tokenId: 'tok_1', path: '/data/token' }, 'an admin token was written');

    expect(lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        service: 'sitewarden',
        event: 'site.sync_failed',
        siteId: 'site_1',
        url: 'http://127.0.0.1:1',
        reason: 'connect',
        msg: 'site.sync_failed',
      }),
      expect.objectContaining({
        level: 'warn',
        event: 'token.bootstrap_created',
        tokenId: 'tok_1',
        path: '/data/token',
        msg: 'an admin token was written',
      }),
    ]);
    expect(Object.keys(lines[0]!).sort()).toEqual(
      ['event', 'level', 'msg', 'reason', 'service', 'siteId', 'time', 'url'].sort(),
    );
  });

  it('runs subscribers after the caller, and a subscriber that throws reaches neither the caller nor the other subscribers', async () => {
    const errors: unknown[] = [];
    const events = createEvents({ onError: (error) => errors.push(error) });
    const order: string[] = [];
    events.subscribe(() => {
      order.push('failing subscriber');
      throw new Error('subscriber bug');
    });
    events.subscribe((event) => order.push(`second subscriber: ${event.event}`));

    expect(() => events.emit('daemon.stopped', {})).not.toThrow();
    order.push('caller continues');
    await settle();

    expect(order).toEqual(['caller continues', 'failing subscriber', 'second subscriber: daemon.stopped']);
    expect(errors).toHaveLength(1);
  });

  it('logs a failing subscriber, and an inline subscriber that throws does not reach the caller either', async () => {
    const { logger, lines } = capturedLogger('info');
    const events = createLoggedEvents(logger);
    events.subscribe(
      () => {
        throw new Error('inline bug');
      },
      { inline: true },
    );
    events.subscribe(() => {
      throw new Error('deferred bug');
    });

    expect(() => events.emit('daemon.stopped', {})).not.toThrow();
    await settle();

    expect(lines.map((line) => [line.msg, line.subscribedEvent])).toEqual([
      ['daemon.stopped', undefined],
      ['an event subscriber failed', 'daemon.stopped'],
      ['an event subscriber failed', 'daemon.stopped'],
    ]);
  });

  it('stops delivering once unsubscribed', async () => {
    const events = createEvents();
    const received: string[] = [];
    const unsubscribe = events.subscribe((event) => received.push(event.event));
    events.emit('daemon.stopped', {});
    await settle();
    unsubscribe();
    events.emit('daemon.stopped', {});
    await settle();
    expect(received).toEqual(['daemon.stopped']);
  });

  it('hands another process’s events only to the subscribers of every process’s events, after the caller', async () => {
    const events = createEvents();
    const live: string[] = [];
    const own: string[] = [];
    const stopLive = events.subscribe((event) => live.push(event.event), { everywhere: true });
    events.subscribe((event) => own.push(event.event));
    events.subscribe((event) => own.push(`inline ${event.event}`), { inline: true });
    events.receive({ event: 'site.down', level: 'error', fields: { siteId: 'site_1' } });
    expect(live).toEqual([]);
    await settle();
    events.emit('daemon.stopped', {});
    await settle();
    expect(live).toEqual(['site.down', 'daemon.stopped']);
    expect(own).toEqual(['inline daemon.stopped', 'daemon.stopped']);
    stopLive();
    events.receive({ event: 'site.up', level: 'info', fields: { siteId: 'site_1' } });
    await settle();
    expect(live).toEqual(['site.down', 'daemon.stopped']);
  });
});
