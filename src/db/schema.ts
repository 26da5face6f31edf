// Every table, for drizzle-kit and for the typed database handle.
export * from '../tokens/tokens.table.js';
export * from '../sites/sites.table.js';
