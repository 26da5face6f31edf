// The types of architecture-doc.mjs, for test/architecture-doc.test.ts.
export const PAGE: string;
export function layerProblems(entries: string[]): string[];
export function srcEntries(root?: string): string[];
export function moduleImports(root?: string): Promise<Array<[string, string]>>;
export interface TriggerDeclaration {
  table: string;
  module: string;
  what: string;
  views: ReadonlyArray<{ name: string }>;
  triggers: ReadonlyArray<{ name: string; on: string; onModule: string }>;
}
export function triggerDeclarations(root?: string): Promise<TriggerDeclaration[]>;
export function layerSection(imports: Array<[string, string]>, triggers?: readonly TriggerDeclaration[]): string;
export function withSection(page: string, section: string): string;
