import { describe, expect, it } from 'vitest';
import { defineProblem, isProblem } from '../../src/shared/errors.js';

describe('problems', () => {
  const notConnected = defineProblem('site-not-connected', 409, 'The site is not connected');

  it('are carried by their errors as the very object that declared them', () => {
    expect(notConnected.create('site x is pending').problem).toBe(notConnected);
  });

  it('are recognised by reference, not by a name that looks alike', () => {
    const lookalike = defineProblem('site-not-connected', 409, 'The site is not connected');
    const error = notConnected.create('site x is pending');
    expect(isProblem(error, notConnected)).toBe(true);
    expect(isProblem(error, lookalike)).toBe(false);
    expect(isProblem(lookalike.create('other'), notConnected)).toBe(false);
  });

  it('match any of several problems, and nothing that is not an AppError', () => {
    const tooLarge = defineProblem('site-response-too-large', 502, 'Too large');
    expect(isProblem(tooLarge.create('big'), notConnected, tooLarge)).toBe(true);
    expect(isProblem(new Error('site-not-connected'), notConnected)).toBe(false);
    expect(isProblem(undefined, notConnected)).toBe(false);
  });
});
