/**
 * Conformance inside the runs (docs/design/conformance.md): every sync judges what it stored in
 * its own transaction. C4: a late arrival re-judges the periods after it; the periods then equal a
 * brute-force judgement of the whole stored history. Alerts: a move to fail names the control, its
 * title, frameworks, value and actor; the move back resolves it; the first run raises one digest;
 * an exception expiring within 14 days raises one low alert, once; a change of baseline re-judges
 * the history once.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { parseBaseline } from '../../src/core/conformance/baseline.js';
import type { JudgedEntry } from '../../src/core/conformance/judge.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { readSettingEntries } from '../../src/store/read/conformance-history.js';
import { readControlPeriods } from '../../src/store/read/control-periods.js';
import { alertRows, BASELINE } from '../helpers/alerts.js';
import { brutePeriods, shape } from '../helpers/conformance.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

const inDays = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');

function baselineText(expires: string): string {
  return `baseline: sync-test
controls:
  - id: AIG-01
    title: Tool calls need approval
    field: require_tool_approval
    expect: { equals: true }
    severity: high
    frameworks:
      NIST-SP-800-53r5: [CM-3, AC-6]
  - id: AIG-02
    title: Audit at least standard
    field: audit_verbosity
    expect: { at_least: AUDIT_VERBOSITY_STANDARD }
  - id: AIG-03
    title: Only shared clients
    field: allowed_client_types
    expect: { subset_of: [MCP_CLIENT_TYPE_SHARED] }
exceptions:
  - control: AIG-03
    tenants: [acme]
    value: [MCP_CLIENT_TYPE_PERSONAL]
    rationale: pilot
    approved_by: ciso
    approved_at: 2020-01-01T00:00:00Z
    ticket: SEC-77
    expires: ${expires}
`;
}

async function start(text: string): Promise<{ h: Harness; file: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-conf-sync-'));
  const file = path.join(dir, 'baseline.yaml');
  writeFileSync(file, text);
  const h = await createHarness({ entries: 40, seed: 8 }, { GOVTRAIL_BASELINE: file });
  open.push(h);
  return { h, file };
}

/** The stored history as the brute force reads it (from the raw entries, not through the judge's reader). */
async function storedHistory(h: Harness): Promise<JudgedEntry[]> {
  const out: JudgedEntry[] = [];
  await h.database.db.transaction().execute((trx) =>
    readSettingEntries(trx, 'acme', null, (page) => {
      out.push(...page);
    }),
  );
  return out;
}

async function loadedAt(h: Harness): Promise<string> {
  const { rows } = await sql<{ k: string }>`
    select to_char(first_loaded_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000Z' as k
    from govtrail.baseline_text where baseline_id = 'sync-test' order by first_loaded_at limit 1`.execute(
    h.database.db,
  );
  return rows[0]?.k as string;
}

describe('conformance in the runs', () => {
  it('C4: a late arrival re-judges the periods after it, in the run; the result equals a brute force', async () => {
    const { h } = await start(baselineText('2099-01-01T00:00:00Z'));
    const base = Date.parse('2026-06-01T00:00:00Z');
    const at = (m: number) => new Date(base + m * 60_000).toISOString();
    h.sandbox.history.appendEntry({ at: at(0), snapshot: { ...BASELINE, requireToolApproval: true } });
    h.sandbox.history.appendEntry({
      at: at(10),
      snapshot: { ...BASELINE, requireToolApproval: true, auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
    });
    expect((await h.sync()).status).toBe('succeeded');
    // Served after the run above stored 00:10, made at 00:05: approval off between 00:05 and 00:10.
    h.sandbox.history.insertLate({ at: at(5), snapshot: { ...BASELINE, requireToolApproval: false } });
    const run = await h.sync();
    expect(run.status).toBe('succeeded');
    const baseline = parseBaseline(baselineText('2099-01-01T00:00:00Z'), 'b', DEFAULT_RANKS);
    const periods = await readControlPeriods(h.database.db, 'acme');
    const expected = brutePeriods(await storedHistory(h), baseline, 'acme', await loadedAt(h));
    expect(periods.map(shape)).toEqual(expected);
    const aig1 = periods.filter((p) => p.controlId === 'AIG-01').slice(-3);
    expect(aig1.map((p) => p.status)).toEqual(['pass', 'fail', 'pass']);
    expect(aig1.slice(1).map((p) => p.fromKey.slice(0, 16))).toEqual([
      '2026-06-01T00:05',
      '2026-06-01T00:10',
    ]);
    // The late arrival moved AIG-01 to fail: alerted once. The move back at 00:10 was made by an
    // entry the first run stored, so it raises nothing now.
    const alerts = await alertRows(h.database.db, run.runId);
    const failing = alerts.filter((a) => a.rule_id === 'CONF-001');
    expect(failing).toHaveLength(1);
    expect(failing[0]?.context.details).toMatchObject({
      control: 'AIG-01',
      title: 'Tool calls need approval',
      frameworks: { 'NIST-SP-800-53r5': ['CM-3', 'AC-6'] },
      value: false,
    });
    expect(failing[0]?.summary).toMatch(/AIG-01 "Tool calls need approval" \(NIST-SP-800-53r5 CM-3, AC-6\)/);
  });

  it('the first run raises one digest; a move to fail alerts with the actor; the move back resolves it', async () => {
    const { h } = await start(baselineText('2099-01-01T00:00:00Z'));
    h.sandbox.history.appendEntry({ snapshot: { ...BASELINE, auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' } });
    const first = await h.sync();
    const digest = (await alertRows(h.database.db, first.runId)).filter((a) => a.rule_id.startsWith('CONF-'));
    expect(digest.map((a) => a.rule_id)).toEqual(['CONF-004']);
    expect(digest[0]?.summary).toMatch(/AIG-02 Audit at least standard/);
    h.sandbox.history.appendEntry({
      snapshot: { ...BASELINE, auditVerbosity: 'AUDIT_VERBOSITY_FULL', requireToolApproval: false },
      actor: { kind: 'ACTOR_KIND_USER', userId: 'mallory' },
    });
    const second = await h.sync();
    const moves = (await alertRows(h.database.db, second.runId)).filter((a) => a.rule_id.startsWith('CONF-'));
    expect(moves.map((a) => [a.rule_id, a.context.details['control']])).toEqual([
      ['CONF-001', 'AIG-01'],
      ['CONF-002', 'AIG-02'],
    ]);
    expect(moves[0]?.context.actor).toEqual({ kind: 'ACTOR_KIND_USER', userId: 'mallory' });
    expect(moves[0]?.severity).toBe('high');
    h.sandbox.history.appendEntry({ snapshot: { ...BASELINE, requireToolApproval: true } });
    const third = await h.sync();
    const back = (await alertRows(h.database.db, third.runId)).filter((a) => a.rule_id.startsWith('CONF-'));
    expect(back.map((a) => a.rule_id)).toEqual(['CONF-002']);
    expect(back[0]?.context.details['resolves']).toBe(moves[0]?.dedupe_key);
  });

  it('an exception expiring within 14 days raises one low alert, once', async () => {
    const { h } = await start(baselineText(inDays(10)));
    h.sandbox.history.appendEntry({
      snapshot: { ...BASELINE, allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL'] },
    });
    await h.sync();
    h.sandbox.history.appendEntry({
      snapshot: { ...BASELINE, allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL'], enabled: false },
    });
    const second = await h.sync();
    const third = await h.sync();
    const expiring = (await alertRows(h.database.db)).filter((a) => a.rule_id === 'CONF-003');
    expect(expiring).toHaveLength(1);
    expect(expiring[0]).toMatchObject({ severity: 'low', run_id: second.runId });
    expect(third.status).toBe('succeeded');
  });

  it('a run with nothing new still judges: the exception about to expire is alerted by it', async () => {
    const { h } = await start(baselineText(inDays(10)));
    h.sandbox.history.appendEntry({
      snapshot: { ...BASELINE, allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL'] },
    });
    await h.sync();
    const nothingNew = await h.sync();
    expect(nothingNew).toMatchObject({ status: 'succeeded', counters: { entriesInserted: 0 } });
    const expiring = (await alertRows(h.database.db)).filter((a) => a.rule_id === 'CONF-003');
    expect(expiring).toHaveLength(1);
    expect(expiring[0]).toMatchObject({ severity: 'low', run_id: nothingNew.runId });
  });

  it('a run with nothing new, by an unchanged baseline, closes quietly and records the judgement; a new baseline re-judges', async () => {
    const { h, file } = await start(baselineText('2099-01-01T00:00:00Z'));
    // Registered, as the CLI and the worker register a configured tenant: the judgement is recorded there.
    await sql`insert into govtrail.tenant (tenant_id) values ('acme')`.execute(h.database.db);
    await h.sync();
    const judgedAt = async () =>
      (
        await sql<{ at: Date; sha: string }>`
          select baseline_judged_at as at, baseline_sha256 as sha from govtrail.tenant where tenant_id = 'acme'`.execute(
          h.database.db,
        )
      ).rows[0];
    const first = await judgedAt();
    const periods = await readControlPeriods(h.database.db, 'acme');
    const alerts = (await alertRows(h.database.db)).length;
    const quiet = await h.sync();
    expect(quiet).toMatchObject({ status: 'succeeded', counters: { entriesInserted: 0 } });
    expect(h.logs.some((l) => l.includes('"quiet":true') && l.includes(`"runId":${quiet.runId}`))).toBe(true);
    const second = await judgedAt();
    expect(second?.sha).toBe(first?.sha);
    expect(second?.at.getTime()).toBeGreaterThan(first?.at.getTime() as number);
    expect(await readControlPeriods(h.database.db, 'acme')).toEqual(periods);
    expect((await alertRows(h.database.db)).length).toBe(alerts);

    // The same history under another baseline: not quiet, the whole history judged again.
    writeFileSync(file, baselineText('2098-01-01T00:00:00Z'));
    const changed = parseBaseline(baselineText('2098-01-01T00:00:00Z'), 'b', DEFAULT_RANKS);
    const rejudged = await h.sync();
    expect(h.logs.some((l) => l.includes('"quiet":true') && l.includes(`"runId":${rejudged.runId}`))).toBe(
      false,
    );
    const { rows } = await sql<{ shas: string[] }>`
      select array_agg(distinct baseline_sha256) as shas from govtrail.control_period where tenant_id = 'acme'`.execute(
      h.database.db,
    );
    expect(rows[0]?.shas).toEqual([changed.sha256]);
    expect((await judgedAt())?.sha).toBe(changed.sha256);
  });

  it('a change of baseline re-judges the whole history once, and the registry records it', async () => {
    const { h, file } = await start(baselineText('2099-01-01T00:00:00Z'));
    await h.sync();
    const before = await readControlPeriods(h.database.db, 'acme');
    writeFileSync(file, baselineText('2098-01-01T00:00:00Z'));
    h.sandbox.history.appendEntry({ snapshot: { ...BASELINE } });
    await h.sync();
    const { rows } = await sql<{ shas: string[] }>`
      select array_agg(distinct baseline_sha256) as shas from govtrail.control_period where tenant_id = 'acme'`.execute(
      h.database.db,
    );
    const changed = parseBaseline(baselineText('2098-01-01T00:00:00Z'), 'b', DEFAULT_RANKS);
    expect(rows[0]?.shas).toEqual([changed.sha256]);
    const after = await readControlPeriods(h.database.db, 'acme');
    expect(after[0]?.fromKey).toBe(before[0]?.fromKey);
    const expected = brutePeriods(await storedHistory(h), changed, 'acme', await loadedAt(h));
    expect(after.map(shape)).toEqual(expected);
  });
});
