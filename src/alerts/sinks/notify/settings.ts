/** Settings of the NOTIFY sink: none beyond the common ones. */
import { defineSinkSettings } from '../settings-reader.js';

/** `pg_notify('govtrail_alerts', <alert id>)` on the database govtrail writes to. */
export type NotifySettings = Readonly<Record<never, never>>;

export const notifySettings = defineSinkSettings<NotifySettings, Record<never, never>>({
  keys: {},
  build: () => ({}),
});
