/**
 * What a sink module exports for the registry: its factory, and what a factory may be given. Below
 * both the registry (which lists the factories) and the sinks (which implement one), so that neither
 * imports the other.
 */
import type { Dispatcher } from 'undici';
import type { Sink } from '../../core/alert.js';
import type { Logger } from '../../runtime/logger.js';

/** What the factories may need besides a sink's own settings. */
export interface SinkDeps {
  /** The log sink writes here. */
  readonly logger: Logger;
  /** Runs `SELECT pg_notify(channel, payload)`; the database layer supplies it. */
  readonly notify?: ((channel: string, payload: string) => Promise<void>) | undefined;
  /** Runbook link template of Config.runbookUrl. */
  readonly runbookUrl?: string | undefined;
  /** undici dispatcher of the HTTP sinks (tests, proxies); the global one otherwise. */
  readonly dispatcher?: Dispatcher | undefined;
}

/** Builds a sink of a type from its settings `S` and its name. */
export type SinkFactory<S> = (config: S & { readonly name: string }, deps: SinkDeps) => Sink;
