// The types of architecture-doc.mjs, for test/architecture-doc.test.ts.
export const PAGE: string;
export function layerProblems(entries: string[]): string[];
export function srcEntries(root?: string): string[];
export function moduleImports(root?: string): Promise<Array<[string, string]>>;
export function layerSection(imports: Array<[string, string]>): string;
export function withSection(page: string, section: string): string;
