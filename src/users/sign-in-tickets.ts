/**
 * Sign-ins begun in one request and continued in another: a single sign-on's flow (oidc.service.ts), a
 * password sign-in waiting for its second factor (sign-in.ts). Each is a ticket under a random id the
 * browser holds, good until it expires, and used once: `take` gives it to one caller at most.
 *
 * On one machine the tickets are in the process's memory. In a cluster (issue 34; docs/design/cluster-state.md,
 * "Sign-in state") they are rows of `sign_in_tickets`, so any API process continues what another began: the id's
 * SHA-256 is stored, never the id; `take` is one `delete … returning`, so a callback replayed, or a second factor
 * sent twice to two processes, gets the ticket once; expired rows are pruned on write, once a minute a process.
 * Either way about 10,000 of a kind are kept at most (a flow begins without a sign-in): a flood makes room by
 * forgetting the oldest.
 */
import { createHash } from 'node:crypto';
import { and, desc, DrizzleQueryError, eq, inArray, lte } from 'drizzle-orm';
import type { StateDatabase } from '../db/state-db.js';
import type { Clock } from '../shared/clock.js';
import { signInTickets } from './sign-in-state.pg-table.js';

export type SignInTicketKind = (typeof signInTickets.kind.enumValues)[number];

/** The memory's methods answer at once; the database's, a promise. */
type Answer<T> = T | Promise<T>;

export interface SignInTickets<T> {
  /** Keeps `value` under `id` (random, from the caller) until `expiresAt` (epoch ms). */
  put(id: string, value: T, expiresAt: number): Answer<void>;
  /** The ticket's value while it has not expired, left in place. */
  find(id: string): Answer<T | undefined>;
  /** The ticket's value while it has not expired, removed (expired or not): one caller gets it at most. */
  take(id: string): Answer<T | undefined>;
  /** Removes the ticket. */
  drop(id: string): Answer<void>;
}

const MAX_TICKETS = 10_000;
/** How often a process prunes the expired rows (on its next write). */
const PRUNE_EVERY_MS = 60_000;
/**
 * Every how many of its writes a process trims a kind's rows to the newest MAX_TICKETS: a flow begins without
 * a sign-in, so a flood must not grow the table for ten minutes. Between trims it may pass the bound by this
 * many rows a process.
 */
const TRIM_EVERY = 100;

/** The tickets of one kind for the state database: its rows in a cluster (PostgreSQL), else the process's memory. */
export function signInTicketsFor<T extends Record<string, unknown>>(
  state: Pick<StateDatabase, 'dialect' | 'run'> | undefined,
  kind: SignInTicketKind,
  clock: Clock,
  { maxTickets = MAX_TICKETS, trimEvery = TRIM_EVERY }: { maxTickets?: number; trimEvery?: number } = {},
): SignInTickets<T> {
  return state?.dialect === 'postgres'
    ? sharedTickets<T>(state, kind, clock, { maxTickets, trimEvery })
    : memoryTickets<T>(clock, maxTickets);
}

function memoryTickets<T>(clock: Clock, maxTickets: number): SignInTickets<T> {
  const tickets = new Map<string, { value: T; expiresAt: number }>();
  const live = (ticket: { value: T; expiresAt: number } | undefined) =>
    ticket && clock.now().getTime() < ticket.expiresAt ? ticket : undefined;
  return {
    put(id, value, expiresAt) {
      if (tickets.size >= maxTickets) {
        const now = clock.now().getTime();
        for (const [key, entry] of tickets) if (entry.expiresAt <= now) tickets.delete(key);
        while (tickets.size >= maxTickets) tickets.delete(tickets.keys().next().value!);
      }
      tickets.set(id, { value, expiresAt });
    },
    find(id) {
      const ticket = tickets.get(id);
      if (ticket && !live(ticket)) tickets.delete(id);
      return live(ticket)?.value;
    },
    take(id) {
      const ticket = tickets.get(id);
      tickets.delete(id);
      return live(ticket)?.value;
    },
    drop(id) {
      tickets.delete(id);
    },
  };
}

function sharedTickets<T extends Record<string, unknown>>(
  state: Pick<StateDatabase, 'run'>,
  kind: SignInTicketKind,
  clock: Clock,
  { maxTickets, trimEvery }: { maxTickets: number; trimEvery: number },
): SignInTickets<T> {
  let prunedAt = 0;
  let writesSinceTrim = 0;
  const byId = (id: string) => and(eq(signInTickets.idHash, sha256(id)), eq(signInTickets.kind, kind));
  const live = (row: { value: Record<string, unknown>; expiresAt: Date } | undefined) =>
    row && clock.now().getTime() < row.expiresAt.getTime() ? (row.value as T) : undefined;
  const columns = { value: signInTickets.value, expiresAt: signInTickets.expiresAt };
  return {
    put: (id, value, expiresAt) =>
      statement(async () => {
        const now = clock.now();
        if (now.getTime() - prunedAt >= PRUNE_EVERY_MS) {
          prunedAt = now.getTime();
          await state.run((db) => db.delete(signInTickets).where(lte(signInTickets.expiresAt, now)));
        }
        await state.run((db) =>
          db.insert(signInTickets).values({ idHash: sha256(id), kind, value, expiresAt: new Date(expiresAt) }),
        );
        if (++writesSinceTrim < trimEvery) return;
        writesSinceTrim = 0;
        // The oldest (the soonest to expire) past the newest `maxTickets` forgotten, as the memory forgets them.
        const newest = state.run((db) =>
          db
            .select({ idHash: signInTickets.idHash })
            .from(signInTickets)
            .where(eq(signInTickets.kind, kind))
            .orderBy(desc(signInTickets.expiresAt))
            .offset(maxTickets),
        );
        const beyond = (await newest).map((row) => row.idHash);
        if (beyond.length > 0)
          await state.run((db) =>
            db.delete(signInTickets).where(and(eq(signInTickets.kind, kind), inArray(signInTickets.idHash, beyond))),
          );
      }),
    find: (id) =>
      statement(async () => live((await state.run((db) => db.select(columns).from(signInTickets).where(byId(id))))[0])),
    take: (id) =>
      statement(async () =>
        live((await state.run((db) => db.delete(signInTickets).where(byId(id)).returning(columns)))[0]),
      ),
    drop: (id) =>
      statement(async () => {
        await state.run((db) => db.delete(signInTickets).where(byId(id)));
      }),
  };
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * A statement whose failure is told without its parameters: drizzle writes them into its error's message,
 * and a flow's PKCE verifier must never reach a log. The driver's message and code stay.
 */
async function statement<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof DrizzleQueryError)) throw error;
    const cause = error.cause as { message?: string; code?: string } | undefined;
    throw Object.assign(new Error(`a sign-in’s state could not be read or written: ${cause?.message ?? 'failed'}`), {
      code: cause?.code,
    });
  }
}
