/**
 * The evidence pack's pure parts, without a database: the schedule interval behind the gap rule,
 * coverage gaps, setting periods, the report's bounded timeline, the manifest and its signature.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, GovtrailError } from '../../src/core/errors.js';
import { CoverageTracker } from '../../src/outputs/pack/coverage.js';
import { parseManifest, serialiseManifest } from '../../src/outputs/pack/manifest.js';
import { findValueOrigins, SettingPeriodBuilder } from '../../src/outputs/pack/periods.js';
import { scheduleIntervalMs } from '../../src/outputs/pack/schedule.js';
import {
  keyThumbprint,
  parseSigningKey,
  parseVerificationKey,
  signDetached,
  verifyDetached,
} from '../../src/outputs/pack/signing.js';
import { TimelineSampler } from '../../src/outputs/pack/timeline-sampler.js';
import type { TimelineEntry } from '../../src/store/read/settings-timeline.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('schedule interval', () => {
  it('is the step of a regular schedule', () => {
    expect(scheduleIntervalMs('*/15 * * * *')).toBe(15 * MIN);
    expect(scheduleIntervalMs('41 3 * * *')).toBe(DAY);
    expect(scheduleIntervalMs('*/30 * * * * *')).toBe(30_000);
  });

  it('is the longest wait of an irregular one, so the schedule’s own pauses are no gaps', () => {
    // Hourly 9–17 on weekdays: Friday 17:00 to Monday 09:00.
    expect(scheduleIntervalMs('0 9-17 * * 1-5')).toBe(64 * HOUR);
    expect(scheduleIntervalMs('0 0,6 * * *')).toBe(18 * HOUR);
  });

  it('is undefined for an expression that is invalid or fires less than twice a year', () => {
    expect(scheduleIntervalMs('not a cron')).toBeUndefined();
    expect(scheduleIntervalMs('0 0 1 1 *')).toBeUndefined();
  });
});

describe('coverage gaps', () => {
  const from = new Date('2025-03-01T00:00:00Z');
  const to = new Date('2025-03-04T00:00:00Z');
  const run = (runId: number, finishedAt: Date | null, status = 'succeeded') => ({
    runId,
    status,
    finishedAt,
  });

  it('flags a day without a successful run, and only that', () => {
    const t = new CoverageTracker({ from, to, now: to, intervalMs: 15 * MIN, lastSuccessBefore: from });
    const gaps: { from: Date; to: Date }[] = [];
    let id = 0;
    let at = from.getTime();
    // Every 15 minutes for a day, a failed run in the middle of the silence, then every 15 minutes again.
    for (; at <= from.getTime() + DAY; at += 15 * MIN) {
      const g = t.add(run(++id, new Date(at + 5_000))).gap;
      if (g) gaps.push(g);
    }
    expect(t.add(run(++id, new Date(at + 6 * HOUR), 'failed')).gap).toBeUndefined();
    for (at += DAY; at < to.getTime(); at += 15 * MIN) {
      const g = t.add(run(++id, new Date(at + 5_000))).gap;
      if (g) gaps.push(g);
    }
    expect(t.finish()).toBeUndefined();
    expect(gaps).toHaveLength(1);
    expect(gaps[0]?.from.toISOString()).toBe('2025-03-02T00:00:05.000Z');
    expect(gaps[0]?.to.toISOString()).toBe('2025-03-03T00:15:05.000Z');
    expect(t.summary()).toMatchObject({ gaps: 1, failed: 1, gapThresholdSeconds: 1800 });
  });

  it('flags the stretch since the last success up to the end, and a period with no run at all', () => {
    const t = new CoverageTracker({ from, to, now: to, intervalMs: 15 * MIN, lastSuccessBefore: null });
    expect(t.add(run(1, new Date(from.getTime() + 10 * MIN))).gap).toBeUndefined();
    const trailing = t.finish();
    expect(trailing?.from.toISOString()).toBe('2025-03-01T00:10:00.000Z');
    expect(trailing?.to.toISOString()).toBe(to.toISOString());

    const none = new CoverageTracker({ from, to, now: to, intervalMs: HOUR, lastSuccessBefore: null });
    expect(none.finish()?.seconds).toBe(3 * 86_400);
  });

  it('measures a period that has not ended up to now', () => {
    const now = new Date(from.getTime() + 20 * MIN);
    const t = new CoverageTracker({ from, to, now, intervalMs: 15 * MIN, lastSuccessBefore: from });
    expect(t.finish()).toBeUndefined();
    expect(t.summary().measuredUntil).toBe(now.toISOString());
  });
});

/** A timeline row; times in seconds after 2025-03-01T00:00:00Z. */
function row(
  entryId: string,
  fromS: number,
  toS: number | null,
  settings: Record<string, unknown>,
  extra: Partial<TimelineEntry> = {},
): TimelineEntry {
  const base = Date.parse('2025-03-01T00:00:00Z');
  const validFrom = new Date(base + fromS * 1000);
  return {
    entryId,
    validFrom,
    validTo: toS === null ? null : new Date(base + toS * 1000),
    validFromUs: validFrom.getTime() * 1000,
    validToUs: toS === null ? null : (base + toS * 1000) * 1000,
    validFromText: validFrom.toISOString(),
    validFromKey: validFrom.toISOString(),
    isDeleted: false,
    changeKind: 'CHANGE_KIND_PUT',
    actorKind: 'ACTOR_KIND_API',
    actorUserId: 'u1',
    tickets: [],
    reasons: [],
    settings,
    directions: {},
    ...extra,
  };
}

async function* list(rows: TimelineEntry[]): AsyncGenerator<TimelineEntry> {
  yield* rows;
}

describe('setting periods', () => {
  const period = { from: new Date('2025-03-01T00:01:40Z'), to: new Date('2025-03-01T00:16:40Z') }; // 100 s … 1000 s

  it('cuts periods to the export period, merges equal values, skips rows of zero length', () => {
    const b = new SettingPeriodBuilder(['require_tool_approval'], period);
    const out = [
      ...b.add(row('a', 0, 200, { require_tool_approval: true })),
      ...b.add(row('b', 200, 300, { require_tool_approval: true })),
      // Two entries at the same instant: the first was never in force.
      ...b.add(row('c', 300, 300, { require_tool_approval: null })),
      ...b.add(
        row(
          'd',
          300,
          500,
          { require_tool_approval: false },
          { directions: { require_tool_approval: 'loosened' } },
        ),
      ),
      ...b.add(row('e', 500, null, { require_tool_approval: false }, { isDeleted: true })),
      ...b.finish(),
    ];
    expect(
      out.map((p) => [
        p.value,
        p.deleted,
        p.startText,
        p.endText,
        p.beganBefore,
        p.continuesAfter,
        p.setByEntryId,
        p.direction,
      ]),
    ).toEqual([
      [true, false, '2025-03-01T00:01:40.000Z', '2025-03-01T00:05:00.000Z', true, false, 'a', ''],
      [false, false, '2025-03-01T00:05:00.000Z', '2025-03-01T00:08:20.000Z', false, false, 'd', 'loosened'],
      [undefined, true, '2025-03-01T00:08:20.000Z', '2025-03-01T00:16:40.000Z', false, true, 'e', ''],
    ]);
  });

  it('names the entry that set a value in force at the start, however far back', async () => {
    const first = row('d', 50, 2000, { enabled: true, audit_verbosity: 'X' });
    const earlier = [
      row('c', 40, 50, { enabled: true, audit_verbosity: 'Y' }),
      row('c0', 40, 40, { enabled: false, audit_verbosity: 'X' }), // zero length: never in force
      row('b', 20, 40, { enabled: true, audit_verbosity: 'Y' }),
      row('a', 0, 20, { enabled: false, audit_verbosity: 'Y' }),
    ];
    const origins = await findValueOrigins(first, ['enabled', 'audit_verbosity'], list(earlier));
    expect(origins.get('enabled')?.entryId).toBe('b');
    expect(origins.get('audit_verbosity')?.entryId).toBe('d');
    const b = new SettingPeriodBuilder(['enabled'], period, origins);
    b.add(first);
    const [p] = b.finish();
    expect([p?.setByEntryId, p?.setAtText, p?.startText]).toEqual([
      'b',
      '2025-03-01T00:00:20.000Z',
      '2025-03-01T00:01:40.000Z',
    ]);
  });

  it('keeps extra fields apart, unset where a snapshot lacks them', () => {
    const b = new SettingPeriodBuilder(['extra_fields.codeModeConcurrency'], period);
    b.add(row('a', 100, 200, { extra_fields: { codeModeConcurrency: 4 } }));
    const ended = b.add(row('b', 200, null, { extra_fields: {} }));
    expect(ended.map((p) => p.value)).toEqual([4]);
    expect(b.finish().map((p) => p.value)).toEqual([null]);
  });
});

describe('report timeline', () => {
  it('keeps a short timeline whole and thins a long one to one contiguous row per slice', () => {
    const period = { from: new Date('2025-03-01T00:00:00Z'), to: new Date('2025-03-01T00:16:40Z') }; // 1000 s
    const short = new TimelineSampler('acme', period, { rows: 10, buckets: 5 });
    for (let i = 0; i < 10; i++) short.add(row(`e${i}`, i * 10, (i + 1) * 10, { enabled: i % 2 === 0 }));
    expect(short.thinned).toBe(false);
    expect(short.result().timeline).toHaveLength(10);

    const long = new TimelineSampler('acme', period, { rows: 10, buckets: 5 });
    for (let i = 0; i < 100; i++) {
      long.add(
        row(
          `e${i}`,
          i * 10,
          i === 99 ? null : (i + 1) * 10,
          { enabled: i % 2 === 0 },
          { directions: { enabled: 'changed' } },
        ),
      );
    }
    expect(long.thinned).toBe(true);
    const { timeline, directions } = long.result();
    expect(timeline).toHaveLength(5);
    // The row in force at each slice's end, drawn from the slice's start: no holes, no overlaps.
    expect(timeline.map((t) => t.entryId)).toEqual(['e19', 'e39', 'e59', 'e79', 'e99']);
    for (let i = 1; i < timeline.length; i++) {
      expect(timeline[i]?.validFrom.getTime()).toBe(timeline[i - 1]?.validTo?.getTime());
    }
    expect(directions.get('e99|enabled')).toBe('changed');
  });
});

describe('manifest and signature', () => {
  const manifest = {
    format: 'govtrail-evidence-pack/1' as const,
    tenant: 'acme',
    from: '2025-01-01T00:00:00.000Z',
    to: '2025-02-01T00:00:00.000Z',
    generatedAt: '2025-02-02T00:00:00.000Z',
    generator: { name: 'govtrail' as const, version: '0.1.0' },
    files: [{ name: 'changes.csv', sha256: 'a'.repeat(64), bytes: 10, rows: 1 }],
    signature: null,
  };

  it('round-trips, and refuses a file name that leaves the directory', () => {
    const bytes = serialiseManifest(manifest);
    expect(parseManifest(bytes)).toEqual({ ok: true, manifest });
    for (const name of ['../etc/passwd', 'a/b.csv', '.hidden', '']) {
      const bad = serialiseManifest({ ...manifest, files: [{ ...manifest.files[0]!, name }] });
      expect(parseManifest(bad).ok).toBe(false);
    }
    expect(parseManifest(Buffer.from('{"format":"x"}')).ok).toBe(false);
  });

  it('signs as a detached compact JWS that verifies with the public key only', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const key = parseSigningKey(pem);
    const payload = serialiseManifest(manifest);
    const jws = await signDetached(payload, key);
    expect(jws).toMatch(/^[\w-]+\.\.[\w-]+$/);
    const header = JSON.parse(Buffer.from(jws.split('.')[0] as string, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(header).toEqual({ alg: 'EdDSA', kid: await keyThumbprint(publicKey) });

    const pub = parseVerificationKey(
      publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      '--public-key',
    );
    expect(await verifyDetached(jws, payload, pub)).toEqual({ ok: true });
    const edited = Buffer.from(payload);
    edited[10] = (edited[10] as number) ^ 1;
    expect((await verifyDetached(jws, edited, pub)).ok).toBe(false);
    const other = generateKeyPairSync('ed25519').publicKey;
    expect((await verifyDetached(jws, payload, other)).ok).toBe(false);
    // An escaped PEM in one environment variable is read too.
    expect(parseSigningKey(pem.replaceAll('\n', '\\n')).asymmetricKeyType).toBe('ed25519');
  });

  it('refuses a signing key that is not an Ed25519 private key, naming the variable', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    expect(() => parseSigningKey(rsa)).toThrow(ConfigError);
    expect(() => parseSigningKey('not a key')).toThrow(/GOVTRAIL_EVIDENCE_SIGNING_KEY/);
    expect(() => parseVerificationKey('junk', '--public-key')).toThrow(GovtrailError);
  });
});
