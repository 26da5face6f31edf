// The types of configuration-doc.mjs, for test/configuration-doc.test.ts.
import type { Settings } from '../src/shared/settings.js';
export const PAGE: string;
export const EXAMPLE: string;
export const README: string;
export function settingsDeclarations(root?: string): Promise<readonly Settings[]>;
export function pageTable(groups: readonly Settings[]): string;
export function readmeTable(groups: readonly Settings[]): string;
export function exampleFile(groups: readonly Settings[]): string;
export function between(text: string, marker: string, content: string, file: string): string;
export function configurationFiles(
  groups: readonly Settings[],
  read?: (path: string) => string,
): Array<{ path: string; now: string; wanted: string }>;
