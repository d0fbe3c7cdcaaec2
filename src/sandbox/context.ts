/**
 * What the server and the control endpoints share: the stores a sandbox serves from and its
 * request counters. In a module of its own so that server.ts and control.ts need not import
 * each other.
 */
import type { AuthService } from './auth.js';
import type { FaultInjector } from './faults.js';
import type { HistoryStore } from './history.js';
import type { OwnerStore } from './owners.js';
import type { PageTokens } from './paging.js';

/** Live request counters. */
export interface SandboxStats {
  /** API requests (token, history, delete and unknown paths; control requests are not counted). */
  readonly requests: number;
  readonly tokenRequests: number;
  readonly historyRequests: number;
  readonly deleteRequests: number;
  /** History entries sent in successful pages. */
  readonly entriesServed: number;
  /** Query parameters of the last history request (last value of each name). */
  readonly lastHistoryQuery: Readonly<Record<string, string>> | undefined;
}

/** The mutable counters behind {@link SandboxStats}. */
export interface MutableStats {
  requests: number;
  tokenRequests: number;
  historyRequests: number;
  deleteRequests: number;
  entriesServed: number;
  lastHistoryQuery: Readonly<Record<string, string>> | undefined;
}

/** Everything the server serves from. */
export interface ServerContext {
  readonly history: HistoryStore;
  readonly auth: AuthService;
  readonly faults: FaultInjector;
  readonly owners: OwnerStore;
  readonly tokens: PageTokens;
  readonly paging: 'keyset' | 'offset';
  readonly stats: MutableStats;
}
