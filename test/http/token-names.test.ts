import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { sqliteStateOf } from '../../src/db/state-db.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { isAppError } from '../../src/shared/errors.js';
import { createLoggedEvents, createLogger } from '../../src/shared/logger.js';
import { createTokensRepository } from '../../src/tokens/tokens.repository.js';
import { createTokensService } from '../../src/tokens/tokens.service.js';

describe('API token names', () => {
  it('refuse control characters (token-name-invalid, 400); any other text is a name', async () => {
    const state = sqliteStateOf(openDatabase(':memory:'));
    try {
      const tokens = createTokensService({
        repository: createTokensRepository(state),
        clock: createFakeClock(),
        events: createLoggedEvents(createLogger({ level: 'silent' })),
      });
      for (const name of [
        'ci\n',
        'ci\r\nforged line',
        '\u001b[31mred',
        'tab\there',
        'nul\u0000',
        'rtl\u202eoverride',
        'c1\u009b',
      ]) {
        let refused: unknown;
        try {
          await tokens.create(name, 'read');
        } catch (error) {
          refused = error;
        }
        expect(isAppError(refused) && refused.problem, JSON.stringify(name)).toMatchObject({
          name: 'token-name-invalid',
          status: 400,
        });
      }
      expect(await tokens.list()).toEqual([]);
      for (const name of ['deploy', 'Déploiement 🚀 prod', 'ops@example.com / nightly'])
        expect((await tokens.create(name, 'read')).summary.name).toBe(name);
    } finally {
      await state.close();
    }
  });
});
