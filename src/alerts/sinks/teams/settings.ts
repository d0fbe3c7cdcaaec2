/** Settings of the Microsoft Teams sink: `url` (or `url_file`) and `timeout`. */
import { defineSinkSettings, text, timeoutKeys } from '../settings-reader.js';

/** Microsoft Teams Workflows webhook (the URL, with its `sig=`, is the credential). */
export interface TeamsSettings {
  readonly url: string;
  readonly timeoutMs: number | undefined;
}

/** Hosts of the retired Office 365 connectors ("incoming webhooks"). */
function isRetiredTeamsConnector(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  return (
    host === 'webhook.office.com' ||
    host.endsWith('.webhook.office.com') ||
    ((host === 'outlook.office.com' || host === 'outlook.office365.com') &&
      url.pathname.startsWith('/webhook'))
  );
}

export const teamsSettings = defineSinkSettings({
  keys: { url: text.optional(), url_file: text.optional(), ...timeoutKeys },
  env: {
    url: 'GOVTRAIL_TEAMS_WEBHOOK_URL',
    timeout: 'GOVTRAIL_TEAMS_TIMEOUT',
    min_severity: 'GOVTRAIL_TEAMS_MIN_SEVERITY',
  },
  build: (v, r): TeamsSettings => {
    const key = v.url_file === undefined ? 'url' : 'url_file';
    const url = r.url(r.requiredSecret(v, 'url'), key);
    if (isRetiredTeamsConnector(new URL(url))) {
      r.fail(
        key,
        'is an Office 365 connector URL (webhook.office.com); connectors are retired: in Teams, create a ' +
          'Workflows webhook ("When a Teams webhook request is received" → "Post card in a chat or channel") ' +
          'and use its URL instead',
      );
    }
    return { url, timeoutMs: r.duration(v.timeout, 'timeout') };
  },
});
