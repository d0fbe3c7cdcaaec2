/**
 * Settings of the Jira Cloud sink: `url` (the site), `email` and `api_token` (or `api_token_file`),
 * `project`, `issue_type`, `labels`, `resolve_transition`, `timeout`.
 */
import { nonEmpty } from '../../../core/setting-values.js';
import { defineSinkSettings, text, timeoutKeys } from '../settings-reader.js';

/** Jira Cloud REST API v3 (docs/design/alert-destinations.md, "Jira Cloud"). */
export interface JiraSettings {
  /** The site, `https://acme.atlassian.net/` (the API is under /rest/api/3/). */
  readonly url: string;
  /** The Atlassian account of the API token (basic auth user). */
  readonly email: string;
  /** The API token. Never logged. */
  readonly apiToken: string;
  /** Project key the issues are created in: `SEC`. */
  readonly project: string;
  /** Issue type name; `Task` by default. */
  readonly issueType: string;
  /** Labels every issue carries besides govtrail's own. */
  readonly labels: readonly string[];
  /** Id of the workflow transition applied when the alert is resolved; none by default (a comment only). */
  readonly resolveTransition: string | undefined;
  readonly timeoutMs: number | undefined;
}

/** A Jira project key: upper-case letters and digits, starting with a letter. */
const PROJECT_KEY = /^[A-Z][A-Z0-9_]{0,63}$/;
/** Jira labels cannot contain spaces. */
const LABEL = /^\S{1,255}$/;

export const jiraSettings = defineSinkSettings({
  keys: {
    url: text.optional(),
    email: text.optional(),
    api_token: text.optional(),
    api_token_file: text.optional(),
    project: text.optional(),
    issue_type: text.optional(),
    labels: text.optional(),
    resolve_transition: text.optional(),
    ...timeoutKeys,
  },
  env: {
    url: 'GOVTRAIL_JIRA_URL',
    email: 'GOVTRAIL_JIRA_EMAIL',
    api_token: 'GOVTRAIL_JIRA_API_TOKEN',
    project: 'GOVTRAIL_JIRA_PROJECT',
    issue_type: 'GOVTRAIL_JIRA_ISSUE_TYPE',
    labels: 'GOVTRAIL_JIRA_LABELS',
    resolve_transition: 'GOVTRAIL_JIRA_RESOLVE_TRANSITION',
    timeout: 'GOVTRAIL_JIRA_TIMEOUT',
    min_severity: 'GOVTRAIL_JIRA_MIN_SEVERITY',
  },
  build: (v, r): JiraSettings => {
    if (v.url === undefined)
      return r.fail('url', 'is required (the site, such as https://acme.atlassian.net)');
    const site = new URL(r.url(v.url, 'url'));
    site.pathname = '/';
    const email = nonEmpty(v.email)?.trim();
    if (email === undefined || !email.includes('@')) {
      return r.fail('email', 'is required: the Atlassian account the API token belongs to');
    }
    const apiToken = r.requiredSecret(v, 'api_token').trim();
    const project = nonEmpty(v.project)?.trim();
    if (project === undefined || !PROJECT_KEY.test(project)) {
      return r.fail(
        'project',
        `must be a Jira project key such as SEC, got ${JSON.stringify(v.project ?? '')}`,
      );
    }
    const labels = (v.labels ?? '')
      .split(',')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    const bad = labels.find((l) => !LABEL.test(l));
    if (bad !== undefined) r.fail('labels', `a Jira label has no spaces: ${JSON.stringify(bad)}`);
    const transition = nonEmpty(v.resolve_transition)?.trim();
    if (transition !== undefined && !/^\d+$/.test(transition)) {
      r.fail(
        'resolve_transition',
        `must be a transition id (digits, as GET /rest/api/3/issue/{key}/transitions lists), got ${JSON.stringify(transition)}`,
      );
    }
    return {
      url: site.href,
      email,
      apiToken,
      project,
      issueType: nonEmpty(v.issue_type)?.trim() ?? 'Task',
      labels,
      resolveTransition: transition,
      timeoutMs: r.duration(v.timeout, 'timeout'),
    };
  },
});
