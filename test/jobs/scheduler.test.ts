import { describe, expect, it } from 'vitest';
import { createScheduler } from '../../src/jobs/scheduler.js';
import { createLogger } from '../../src/shared/logger.js';

const logger = createLogger({ level: 'silent' });

describe('the scheduler', () => {
  it('waits at a stop for the ticks in progress, and starts none after it', async () => {
    const scheduler = createScheduler({ logger });
    const order: string[] = [];
    let finish!: () => void;
    scheduler.every('slow', '0 0 1 1 *', async () => {
      order.push('slow started');
      await new Promise<void>((resolve) => (finish = resolve));
      order.push('slow finished');
    });
    scheduler.every('quick', '0 0 1 1 *', () => void order.push('quick'));
    const startUp = scheduler.runAll();
    await new Promise((resolve) => setImmediate(resolve));
    const stopping = scheduler.stop().then(() => order.push('stopped'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual(['slow started']);
    finish();
    await Promise.all([stopping, startUp]);
    // The tick in progress ended before the stop did; the one after it never started.
    expect(order).toEqual(['slow started', 'slow finished', 'stopped']);
    expect(scheduler.health().stopped).toBe(true);
  });

  it('logs a failed tick and goes on with the next', async () => {
    const scheduler = createScheduler({ logger });
    const ran: string[] = [];
    scheduler.every('failing', '0 0 1 1 *', () => {
      throw new Error('boom');
    });
    scheduler.every('next', '0 0 1 1 *', () => void ran.push('next'));
    await scheduler.runAll();
    expect(ran).toEqual(['next']);
    await scheduler.stop();
  });

  it('runs at start every tick but those registered atStart: false (an offsite prune waits for its hour)', async () => {
    const scheduler = createScheduler({ logger });
    const ran: string[] = [];
    scheduler.every('sync', '0 0 1 1 *', () => void ran.push('sync'));
    scheduler.every('offsite-prune', '0 0 1 1 *', () => void ran.push('prune'), { atStart: false });
    await scheduler.runAll();
    expect(ran).toEqual(['sync']);
    await scheduler.stop();
  });
});
