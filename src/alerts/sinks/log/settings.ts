/** Settings of the log sink: none beyond the common ones. */
import { defineSinkSettings } from '../settings-reader.js';

/** One structured log line per alert. */
export type LogSettings = Readonly<Record<never, never>>;

export const logSettings = defineSinkSettings<LogSettings, Record<never, never>>({
  keys: {},
  build: () => ({}),
});
