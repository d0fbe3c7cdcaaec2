/**
 * Settings of the email sink: the SMTP server (`host`, `port`, `security`, `user`, `password`,
 * `ca`, `reject_unauthorized`), the addresses (`from`, `to`), `mode` and `timeout`.
 */

import { z } from 'zod';
import { nonEmpty } from '../../../core/setting-values.js';
import {
  booleanKey,
  defineSinkSettings,
  numberKey,
  rejectUnauthorizedSetting,
  text,
  timeoutKeys,
} from '../settings-reader.js';

/** Mail over SMTP (STARTTLS or implicit TLS): one per alert, or a digest per delivery pass. */
export interface EmailSettings {
  readonly host: string;
  readonly port: number;
  readonly security: 'starttls' | 'tls';
  readonly user: string | undefined;
  /** Never logged. */
  readonly password: string | undefined;
  readonly from: string;
  readonly to: readonly string[];
  readonly ca: string | undefined;
  readonly rejectUnauthorized: boolean;
  readonly timeoutMs: number | undefined;
  /** `alert`: one mail per alert; `digest`: one mail per delivery pass listing its alerts. */
  readonly mode: 'alert' | 'digest';
}

/** An address without a display name. */
const ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;

export const emailSettings = defineSinkSettings({
  keys: {
    host: text.optional(),
    port: numberKey.optional(),
    security: text.optional(),
    user: text.optional(),
    password: text.optional(),
    password_file: text.optional(),
    from: text.optional(),
    to: z.union([text, z.array(text)]).optional(),
    ca: text.optional(),
    ca_file: text.optional(),
    reject_unauthorized: booleanKey.optional(),
    mode: text.optional(),
    ...timeoutKeys,
  },
  env: {
    host: 'GOVTRAIL_SMTP_HOST',
    mode: 'GOVTRAIL_EMAIL_MODE',
    port: 'GOVTRAIL_SMTP_PORT',
    security: 'GOVTRAIL_SMTP_SECURITY',
    user: 'GOVTRAIL_SMTP_USER',
    password: 'GOVTRAIL_SMTP_PASSWORD',
    from: 'GOVTRAIL_EMAIL_FROM',
    to: 'GOVTRAIL_EMAIL_TO',
    ca: 'GOVTRAIL_SMTP_CA',
    timeout: 'GOVTRAIL_SMTP_TIMEOUT',
    min_severity: 'GOVTRAIL_EMAIL_MIN_SEVERITY',
  },
  build: (v, r): EmailSettings => {
    const host = nonEmpty(v.host)?.trim();
    if (host === undefined) return r.fail('host', 'is required (the SMTP server)');
    const security = (v.security ?? 'starttls').trim().toLowerCase();
    if (security !== 'starttls' && security !== 'tls') {
      r.fail('security', `must be starttls (port 587) or tls (port 465), got ${JSON.stringify(v.security)}`);
    }
    const mode = (v.mode ?? 'alert').trim().toLowerCase();
    if (mode !== 'alert' && mode !== 'digest') {
      r.fail(
        'mode',
        `must be alert (one mail per alert) or digest (one mail per delivery pass), got ${JSON.stringify(v.mode)}`,
      );
    }
    const port = v.port === undefined ? (security === 'tls' ? 465 : 587) : Number(v.port);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      r.fail('port', `must be 1–65535, got ${JSON.stringify(v.port)}`);
    }
    const from = nonEmpty(v.from)?.trim();
    if (from === undefined) return r.fail('from', 'is required (the sender address)');
    const bare = /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from;
    if (!ADDRESS.test(bare)) r.fail('from', `is not an address: ${JSON.stringify(from)}`);
    const to = (Array.isArray(v.to) ? v.to : (v.to ?? '').split(','))
      .map((t) => t.trim())
      .filter((t) => t !== '');
    if (to.length === 0) r.fail('to', 'needs at least one recipient');
    for (const t of to) if (!ADDRESS.test(t)) r.fail('to', `is not an address: ${JSON.stringify(t)}`);
    const user = nonEmpty(v.user)?.trim();
    const password = r.secret(v, 'password');
    if ((user === undefined) !== (password === undefined)) {
      r.fail(user === undefined ? 'user' : 'password', 'authentication needs both user and password');
    }
    const rejectUnauthorized = rejectUnauthorizedSetting(v.reject_unauthorized, r);
    return {
      host,
      port,
      security: security as 'starttls' | 'tls',
      user,
      password,
      from,
      to,
      ca: r.secret(v, 'ca'),
      rejectUnauthorized,
      timeoutMs: r.duration(v.timeout, 'timeout'),
      mode: mode as 'alert' | 'digest',
    };
  },
});
