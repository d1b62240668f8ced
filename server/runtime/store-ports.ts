import type { Store } from './store.js';

/*
 * The store's faces, for the ports each role declares beside itself: a constructor's type then
 * says what its file may touch. Each is a narrow view of `Store`, so the store (and the assembled
 * cluster) satisfies every port built of them.
 */

/** The read model as deciders see it (moved at once by a commit), the clock and the feature gates. */
export type StoreReads = Pick<Store, 'clock' | 'gates' | 'readModel' | 'gameServers' | 'get'>;

/** Appending events: the only way anything changes (with, for a client's answer, a read of the state they leave once durable). */
export type StoreCommits = Pick<Store, 'commit' | 'commitAndRead'>;

/** Reads that wait for durable state, for answers to clients. */
export type StoreCommittedReads = Pick<Store, 'readCommitted' | 'settled' | 'resourceVersion'>;

/** The change feeds: what was applied (for deciders) and what was committed (for watchers, from a resourceVersion on). */
export type StoreFeeds = Pick<Store, 'changesOf' | 'changesSince' | 'resourceApplied$' | 'gameServerApplied$' | 'gameServerChanges$' | 'watchGameServer'>;

/** The registered projections shared per store: the one per-node counter and those registered on first use. */
export type StoreProjections = Pick<Store, 'nodes' | 'use'>;

/** The event log itself, for what reads or replays its records. */
export type StoreLog = Pick<Store, 'log'>;
