import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

const ARTIFACTS = join(import.meta.dirname, '../../test-artifacts/journeys');

/**
 * Screenshots of one journey, kept as artifacts in test-artifacts/journeys/NAME/ (emptied at the
 * start, so what is there is this run's): `shot(page, '01-step')`.
 */
export function journeyScreenshots(journey: string) {
  const directory = join(ARTIFACTS, journey);
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  return (page: Page, step: string) => page.screenshot({ path: join(directory, `${step}.png`), fullPage: true });
}
