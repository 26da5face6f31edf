import { timestamp } from 'drizzle-orm/pg-core';

/**
 * `timestamptz` at millisecond precision, read and written as a Date: what the SQLite tables'
 * `timestamp_ms` integers give the repositories, so a Date round-trips exactly and a page's cursor
 * (`createdAt`, `id`) compares equal to the row it came from (microseconds would not).
 */
export const timestampMs = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' });
