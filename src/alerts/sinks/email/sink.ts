/**
 * The email sink: one mail per alert over SMTP (nodemailer), STARTTLS (port 587, TLS required) or
 * implicit TLS (port 465), with optional authentication, through one pooled transport closed by
 * `close()`.
 *
 * Each mail has a plain-text and an HTML part (every value from the tenant HTML-escaped, links only
 * http(s)), the subject `[govtrail] HIGH AIGOV-002: Tool approval was turned off (tenant acme)`, a
 * deterministic `Message-ID` derived from the delivery id (the same on every retry, so a mail
 * delivered twice after a drop in mid-DATA is recognisable) and the headers
 * `X-Govtrail-Dedupe-Key`, `X-Govtrail-Alert-Id`, `X-Govtrail-Rule` for mail rules.
 *
 * SMTP 4xx answers and connection problems are retried; 5xx answers (535 authentication failed,
 * 550 mailbox unavailable, …), all recipients refused, a certificate not trusted and a bad
 * configuration are permanent. Wire facts: docs/design/alert-destinations.md, "Email (SMTP)".
 *
 * `mode: digest` sends one mail per delivery pass instead, listing every alert due for the sink,
 * most severe first (see {@link digestMail}). The pass's outcome is every listed alert's outcome: a
 * retry resends the digest with whatever alerts are due then.
 */
import { createHash } from 'node:crypto';
import type { Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import {
  type AlertFollowUp,
  type AlertMessage,
  type BatchItem,
  SEVERITIES,
  type Severity,
  type Sink,
} from '../../../core/alert.js';
import { followUpLine, followUpTitle, isAnnounced } from '../../../core/follow-up.js';
import { alertLinks, formatValue, shortEnum } from '../../../core/format.js';
import { permanentFailure, retryableFailure } from '../delivery-failure.js';
import { clipAlert } from '../ocsf-event.js';
import { DEFAULT_SINK_TIMEOUT_MS } from '../settings-reader.js';
import type { SinkFactory } from '../sink-factory.js';
import type { EmailSettings } from './settings.js';

export interface EmailSinkOptions {
  /** Sink name in alert_delivery and messages; `email` by default. */
  readonly name?: string | undefined;
  readonly host: string;
  readonly port: number;
  /** `starttls`: plain connect, then STARTTLS, required; `tls`: TLS from the first byte. */
  readonly security: 'starttls' | 'tls';
  readonly user?: string | undefined;
  readonly password?: string | undefined;
  readonly from: string;
  readonly to: readonly string[];
  /** PEM CA bundle to trust; the system's otherwise. */
  readonly ca?: string | undefined;
  readonly rejectUnauthorized?: boolean | undefined;
  readonly runbookUrl?: string | undefined;
  readonly timeoutMs?: number | undefined;
  /** `alert` (default): one mail per alert; `digest`: one mail per delivery pass. */
  readonly mode?: 'alert' | 'digest' | undefined;
}

/** A digest lists at most this many alerts in full; the rest by one line each. */
export const DIGEST_FULL_ALERTS = 50;
/** Dedupe keys named in the `X-Govtrail-Dedupe-Keys` header of a digest; the rest are in the body. */
const DIGEST_HEADER_KEYS = 20;

/** A mail as the sink sends it (exported for tests and the README). */
export interface AlertMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  readonly messageId: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** Text made safe for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** One line of header text: no CR, LF or other control characters. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/**
 * The short follow-up mail of a lifecycle event: one line, threaded under the alert's own mail
 * (`In-Reply-To` its Message-ID, which derives from the alert's delivery id).
 */
export function followUpMail(
  alert: AlertMessage,
  event: AlertFollowUp,
  o: { readonly deliveryId: string; readonly from: string },
): AlertMail {
  const line = followUpLine(alert, event);
  const ids = `Alert ${alert.alertId} · dedupe ${alert.dedupeKey} · event ${event.eventId} · delivery ${o.deliveryId}`;
  return {
    subject: oneLine(`[govtrail] ${followUpTitle(alert, event)} (tenant ${alert.tenantId})`).slice(0, 250),
    text: `${line}\n\n${ids}\n`,
    html: `<html><body><p>${escapeHtml(line)}</p><p style="color:#666;font-size:small">${escapeHtml(ids)}</p></body></html>`,
    messageId: `<govtrail.${o.deliveryId.replace(/[^A-Za-z0-9._-]/g, '')}@${domainOf(o.from)}>`,
    headers: {
      'X-Govtrail-Dedupe-Key': oneLine(alert.dedupeKey),
      'X-Govtrail-Alert-Id': oneLine(alert.alertId),
      'X-Govtrail-Event': oneLine(`alert.${event.kind}`),
    },
  };
}

/** The domain of an address (`Name <a@b.example>` → `b.example`), for the Message-ID. */
function domainOf(address: string): string {
  const m = /@([A-Za-z0-9.-]+)>?\s*$/.exec(address);
  return m?.[1] ?? 'govtrail.invalid';
}

/** The mail of an alert. */
export function alertMail(
  alert: AlertMessage,
  o: { readonly deliveryId: string; readonly from: string; readonly runbookUrl?: string | undefined },
): AlertMail {
  const a = clipAlert(alert, { text: 2000, items: 100 });
  const c = a.context;
  const facts: Array<[string, string]> = [
    ['Severity', a.severity.toUpperCase()],
    ['Rule', `${a.ruleId} v${a.ruleVersion} (${c.ruleName})`],
    ['Tenant', a.tenantId],
  ];
  if (c.changedAt !== null) facts.push(['Changed at', c.changedAt]);
  if (c.changeKind !== null) facts.push(['Change', shortEnum(c.changeKind)]);
  if (c.actor.kind !== null || c.actor.userId !== null) {
    const kind = c.actor.kind === null ? 'unknown' : shortEnum(c.actor.kind);
    facts.push(['Actor', c.actor.userId === null ? kind : `${kind} (user ${c.actor.userId})`]);
  }
  for (const t of c.tickets) facts.push(['Ticket', t.value ?? t.url ?? '']);
  for (const r of c.reasons) facts.push(['Reason', r]);
  const changes = c.changes.map(
    (ch) =>
      `${ch.label}: ${formatValue(ch.field, ch.oldValue)} → ${formatValue(ch.field, ch.newValue)} (${ch.direction})`,
  );
  const ids = `Alert ${a.alertId} · entry ${a.entryId ?? '-'} · dedupe ${a.dedupeKey} · delivery ${o.deliveryId}`;
  const links = alertLinks(a, o.runbookUrl);

  const text = [
    a.title,
    '',
    a.summary,
    '',
    ...facts.map(([k, v]) => `${k}: ${v}`),
    ...(changes.length > 0 ? ['', 'Changes:', ...changes.map((l) => `- ${l}`)] : []),
    ...(c.runbook !== '' ? ['', `Runbook: ${c.runbook}`] : []),
    ...(links.length > 0 ? ['', ...links.map((l) => `${l.text}: ${l.href}`)] : []),
    '',
    ids,
    '',
  ].join('\n');

  const e = escapeHtml;
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2>${e(a.severity.toUpperCase())} · ${e(a.ruleId)}: ${e(a.title)}</h2>`,
    `<p>${e(a.summary)}</p>`,
    '<table>',
    ...facts.map(([k, v]) => `<tr><th align="left">${e(k)}</th><td>${e(v)}</td></tr>`),
    '</table>',
    ...(changes.length > 0
      ? ['<h3>Changes</h3><ul>', ...changes.map((l) => `<li>${e(l)}</li>`), '</ul>']
      : []),
    ...(c.runbook !== '' ? [`<p><b>Runbook</b>: ${e(c.runbook)}</p>`] : []),
    ...(links.length > 0
      ? ['<p>', ...links.map((l) => `<a href="${e(l.href)}">${e(l.text)}</a><br>`), '</p>']
      : []),
    `<p style="color:#666;font-size:small">${e(ids)}</p>`,
    '</body></html>',
  ].join('\n');

  return {
    subject: oneLine(
      `[govtrail] ${a.severity.toUpperCase()} ${a.ruleId}: ${a.title} (tenant ${a.tenantId})`,
    ).slice(0, 250),
    text,
    html,
    messageId: `<govtrail.${o.deliveryId.replace(/[^A-Za-z0-9._-]/g, '')}@${domainOf(o.from)}>`,
    headers: {
      'X-Govtrail-Dedupe-Key': oneLine(alert.dedupeKey),
      'X-Govtrail-Alert-Id': oneLine(alert.alertId),
      'X-Govtrail-Rule': oneLine(alert.ruleId),
    },
  };
}

/** Most severe first. */
const SEVERITY_ORDER: readonly Severity[] = [...SEVERITIES].reverse();

/**
 * The digest mail of one delivery pass: the alerts most severe first (then oldest first), the
 * first {@link DIGEST_FULL_ALERTS} with their summary, changes and links, any further ones as one
 * line. The Message-ID derives from the set of delivery ids, so resending the same digest gives
 * the same id.
 */
export function digestMail(
  items: readonly BatchItem[],
  o: { readonly from: string; readonly runbookUrl?: string | undefined },
): AlertMail {
  const rank = (s: Severity) => SEVERITY_ORDER.indexOf(s);
  const sorted = [...items].sort(
    (a, b) =>
      rank(a.alert.severity) - rank(b.alert.severity) ||
      a.alert.createdAt.localeCompare(b.alert.createdAt) ||
      a.alert.alertId.localeCompare(b.alert.alertId, 'en', { numeric: true }),
  );
  const counts = SEVERITY_ORDER.map((s) => [s, sorted.filter((i) => i.alert.severity === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s.toUpperCase()}`);
  const tenants = [...new Set(sorted.map((i) => i.alert.tenantId))];
  const n = sorted.length;
  const subject = oneLine(
    `[govtrail] ${n} alert${n === 1 ? '' : 's'}: ${counts.join(', ')} (${
      tenants.length === 1 ? `tenant ${tenants[0]}` : `${tenants.length} tenants`
    })`,
  ).slice(0, 250);
  const full = sorted.slice(0, DIGEST_FULL_ALERTS).map((i) => ({
    item: i,
    mail: alertMail(i.alert, { deliveryId: i.delivery.deliveryId, from: o.from, runbookUrl: o.runbookUrl }),
  }));
  const rest = sorted.slice(DIGEST_FULL_ALERTS);
  const headline = (a: AlertMessage) =>
    `${a.severity.toUpperCase()} ${a.ruleId}: ${a.title} (tenant ${a.tenantId}, entry ${a.entryId ?? '-'})`;

  const text = [
    `${n} alert${n === 1 ? '' : 's'} from govtrail: ${counts.join(', ')}.`,
    '',
    ...full.flatMap(({ mail }, k) => [`${'='.repeat(8)} ${k + 1} of ${n}`, mail.text]),
    ...(rest.length > 0
      ? [
          `${'='.repeat(8)} ${rest.length} more`,
          ...rest.map((i) => `- ${headline(i.alert)} · dedupe ${i.alert.dedupeKey}`),
          '',
        ]
      : []),
  ].join('\n');

  const e = escapeHtml;
  const bodyOf = (html: string) => html.replace(/^[\s\S]*?<body[^>]*>/, '').replace(/<\/body>[\s\S]*$/, '');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h1>${e(`${n} alert${n === 1 ? '' : 's'}: ${counts.join(', ')}`)}</h1>`,
    ...full.map(({ mail }) => `<section>${bodyOf(mail.html)}</section><hr>`),
    ...(rest.length > 0
      ? [
          `<h3>${rest.length} more</h3><ul>`,
          ...rest.map((i) => `<li>${e(headline(i.alert))} · dedupe ${e(i.alert.dedupeKey)}</li>`),
          '</ul>',
        ]
      : []),
    '</body></html>',
  ].join('\n');

  const ids = sorted.map((i) => i.delivery.deliveryId).sort();
  const digestId = createHash('sha256').update(ids.join('\n')).digest('hex').slice(0, 32);
  const keys = sorted.map((i) => oneLine(i.alert.dedupeKey));
  return {
    subject,
    text,
    html,
    messageId: `<govtrail.digest.${digestId}@${domainOf(o.from)}>`,
    headers: {
      'X-Govtrail-Digest-Count': String(n),
      'X-Govtrail-Dedupe-Keys':
        keys.slice(0, DIGEST_HEADER_KEYS).join(', ') +
        (keys.length > DIGEST_HEADER_KEYS
          ? `, … (${keys.length - DIGEST_HEADER_KEYS} more in the body)`
          : ''),
    },
  };
}

/** Errors of nodemailer that repeating cannot fix. */
const PERMANENT_CODES = new Set(['EAUTH', 'EENVELOPE', 'ETLS', 'ECONFIG', 'EMESSAGE']);
const CERT_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** Whether an SMTP failure is permanent: 5xx, or a code repeating cannot fix; 4xx and network errors are not. */
export function isPermanentSmtpError(err: unknown): boolean {
  const e = err as { responseCode?: unknown; code?: unknown; originalCode?: unknown } | null;
  const status = e?.responseCode;
  if (typeof status === 'number' && status >= 400 && status < 600) return status >= 500;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  // nodemailer reports a TLS failure as ESOCKET and keeps the TLS error's code in originalCode.
  const original = typeof e?.originalCode === 'string' ? e.originalCode : undefined;
  return (
    (code !== undefined && (PERMANENT_CODES.has(code) || CERT_CODES.has(code))) ||
    (original !== undefined && CERT_CODES.has(original))
  );
}

/** Creates the email sink. */
export function createEmailSink(o: EmailSinkOptions): Sink {
  const name = o.name ?? 'email';
  const timeoutMs = o.timeoutMs ?? DEFAULT_SINK_TIMEOUT_MS;
  // nodemailer is loaded with the first mail, not with the sink: every run builds the configured
  // sinks, and most send no mail (its modules cost a process about 4 MiB; docs/deploy.md "Memory").
  let transport: Promise<Transporter<SMTPPool.SentMessageInfo>> | undefined;
  const options: SMTPPool.Options = {
    pool: true,
    maxConnections: 2,
    host: o.host,
    port: o.port,
    secure: o.security === 'tls',
    requireTLS: o.security === 'starttls',
    ...(o.user === undefined ? {} : { auth: { user: o.user, pass: o.password ?? '' } }),
    tls: {
      minVersion: 'TLSv1.2',
      rejectUnauthorized: o.rejectUnauthorized ?? true,
      ...(o.ca === undefined ? {} : { ca: o.ca }),
    },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs * 3,
  };
  const open = (): Promise<Transporter<SMTPPool.SentMessageInfo>> => {
    transport ??= import('nodemailer').then((m) => m.default.createTransport(options));
    return transport;
  };
  const send = async (mail: AlertMail): Promise<void> => {
    const t = await open();
    let info: { accepted?: unknown[]; rejected?: unknown[] };
    try {
      info = await t.sendMail({
        from: o.from,
        to: [...o.to],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: mail.messageId,
        headers: mail.headers,
      });
    } catch (err) {
      const e = err as { message?: unknown; responseCode?: unknown };
      const reason = `SMTP ${o.host}:${o.port}: ${typeof e.message === 'string' ? e.message : String(err)}`;
      if (isPermanentSmtpError(err)) {
        throw permanentFailure(name, reason, {
          cause: err,
          ...(typeof e.responseCode === 'number' ? { status: e.responseCode } : {}),
        });
      }
      throw retryableFailure(name, reason, { cause: err });
    }
    if ((info.accepted ?? []).length === 0) {
      throw permanentFailure(name, `SMTP ${o.host}:${o.port}: every recipient was refused`);
    }
  };
  const digest = (items: readonly BatchItem[]) =>
    send(digestMail(items, { from: o.from, runbookUrl: o.runbookUrl }));
  return {
    name,
    async deliver(alert, delivery) {
      // In digest mode a lone alert (`govtrail alerts test`) is a digest of one.
      if (o.mode === 'digest') return digest([{ alert, delivery }]);
      await send(
        alertMail(alert, { deliveryId: delivery.deliveryId, from: o.from, runbookUrl: o.runbookUrl }),
      );
    },
    ...(o.mode === 'digest' ? { deliverBatch: digest } : {}),
    async deliverEvent(alert, event, delivery) {
      if (!isAnnounced(event.kind)) return;
      await send(followUpMail(alert, event, { deliveryId: delivery.deliveryId, from: o.from }));
    },
    async close() {
      (await transport)?.close();
    },
  };
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<EmailSettings> = (c, d) =>
  createEmailSink({
    name: c.name,
    host: c.host,
    port: c.port,
    security: c.security,
    user: c.user,
    password: c.password,
    from: c.from,
    to: c.to,
    ca: c.ca,
    rejectUnauthorized: c.rejectUnauthorized,
    runbookUrl: d.runbookUrl,
    timeoutMs: c.timeoutMs,
    mode: c.mode,
  });
