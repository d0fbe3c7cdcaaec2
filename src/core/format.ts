/**
 * Human renderings of values in alert titles, summaries and chat messages. The alert context keeps
 * the values exactly as received; only text meant for people is shortened here. Pure.
 */

import type { AlertMessage } from './alert.js';
import { canonicalJson } from './diff.js';
import { parseDuration } from './normalise/duration.js';

const ENUM_PREFIXES = [
  'CHANGE_KIND_',
  'ACTOR_KIND_',
  'ANNOTATION_KIND_',
  'MCP_CLIENT_TYPE_',
  'AUDIT_VERBOSITY_',
  'TOOL_CLASSIFICATION_',
];

/** `ACTOR_KIND_SUPPORT` → `SUPPORT`; other text unchanged. */
export function shortEnum(value: string): string {
  for (const p of ENUM_PREFIXES)
    if (value.startsWith(p) && value.length > p.length) return value.slice(p.length);
  return value;
}

/** `5400` → `1h30m`; `90.5` → `1m30.5s`. */
export function humanSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return String(seconds);
  const sign = seconds < 0 ? '-' : '';
  let rest = Math.abs(seconds);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  if (rest > 0 || parts.length === 0) parts.push(`${Number(rest.toFixed(6))}s`);
  return sign + parts.join('');
}

const MAX_VALUE_TEXT = 200;

/**
 * How an empty client type list reads everywhere: every client type is allowed (docs/design/tenant-api.md).
 */
export const ALL_CLIENT_TYPES = 'all client types';

/**
 * A setting's value from a settings row (the settings_timeline columns) as it is in force: an
 * absent `allowed_client_types` (proto3 JSON omits an empty list) is the empty list, all client
 * types allowed, which `allows_all_client_types` records. A list that was not a list stays NULL.
 */
export function settingInForce(settings: Readonly<Record<string, unknown>>, column: string): unknown {
  const value = settings[column];
  if (column === 'allowed_client_types' && (value === null || value === undefined)) {
    return settings['allows_all_client_types'] === true ? [] : value;
  }
  return value;
}

/** One field value for people: `unset`, `all client types`, `[PERSONAL, SHARED]`, `1h (3600s)`, `0s (never)`. */
export function formatValue(field: string, value: unknown): string {
  if (value === null || value === undefined) return 'unset';
  if (field === 'allowed_client_types' && Array.isArray(value)) {
    if (value.length === 0) return ALL_CLIENT_TYPES;
    return `[${value.map((v) => (typeof v === 'string' ? shortEnum(v) : canonicalJson(v))).join(', ')}]`;
  }
  if (typeof value === 'string') {
    const d = parseDuration(value);
    if (d !== undefined && (field.endsWith('_after') || field.endsWith('_interval'))) {
      if (d.seconds === 0) return field === 'retention_delete_after' ? '0s (never delete)' : '0s (disabled)';
      return `${humanSeconds(d.seconds)} (${value})`;
    }
    return truncate(shortEnum(value), MAX_VALUE_TEXT);
  }
  if (typeof value === 'boolean' || typeof value === 'number') return String(value);
  return truncate(canonicalJson(value), MAX_VALUE_TEXT);
}

/** Cuts text to `max` characters, marking the cut with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** The URL serialised when it is http(s); undefined for anything else (javascript:, data:, junk). */
export function safeHttpUrl(url: string | null | undefined): string | undefined {
  if (url === null || url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
}

/** The runbook URL of a rule: `{rule_id}` in the template replaced by the (URL-encoded) rule id. */
export function runbookUrlFor(template: string | undefined, ruleId: string): string | undefined {
  if (template === undefined) return undefined;
  return safeHttpUrl(template.replaceAll('{rule_id}', encodeURIComponent(ruleId)));
}

/** A link a chat message or incident may carry: tickets with an http(s) URL, then the runbook. */
export interface AlertLink {
  readonly href: string;
  readonly text: string;
}

/** The ticket and runbook links of an alert, unsafe URLs dropped. */
export function alertLinks(
  alert: Pick<AlertMessage, 'ruleId' | 'context'>,
  runbookUrlTemplate: string | undefined,
): AlertLink[] {
  const links: AlertLink[] = [];
  for (const t of alert.context.tickets) {
    const href = safeHttpUrl(t.url);
    if (href !== undefined) links.push({ href, text: `Ticket ${t.value ?? ''}`.trim() });
  }
  const runbook = runbookUrlFor(runbookUrlTemplate, alert.ruleId);
  if (runbook !== undefined) links.push({ href: runbook, text: `Runbook ${alert.ruleId}` });
  return links;
}
