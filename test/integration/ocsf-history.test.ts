/**
 * Every OCSF event govtrail emits for a realistic history validates against the 1.8.0 export: a sandbox
 * tenant with a seeded history and the curated scenarios (every alert rule), synced by the real sync, then
 * more of it — every change kind (CREATE, PUT, HARD_DELETE, one the API documentation does not know, one
 * absent), unknown enum values, an entry without a snapshot, hostile strings — then a reconcile that finds a
 * rewritten and a dropped entry, and a streak of failed runs. Events are read through the export's own
 * keyset-paged queries, with pages far smaller than the history.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import { reconcileTenant } from '../../src/app/tenant-run.js';
import {
  alertToDetectionFinding,
  entryToEntityManagement,
  type OcsfDetectionFinding,
  type OcsfEntityManagement,
} from '../../src/core/ocsf/index.js';
import { iterateOcsfAlerts, iterateOcsfEntries } from '../../src/store/read/ocsf.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { ocsfProblems } from '../helpers/ocsf.js';

const HOSTILE = [
  '=HYPERLINK("http://x")',
  'quote " back \\ slash',
  'two\nlines\r\n',
  '</script><img src=x onerror=alert(1)>',
  'ünïcödé ✓ 🚀 \u2028',
  '\u001b[31mred',
];

let h: Harness;
let entities: OcsfEntityManagement[];
let findings: OcsfDetectionFinding[];
const options = { now: new Date('2026-03-01T00:00:00Z'), productVersion: '0.0.0-test' };
const period = {
  tenantId: 'acme',
  from: new Date('2000-01-01T00:00:00Z'),
  to: new Date('2100-01-01T00:00:00Z'),
};

beforeAll(async () => {
  h = await createHarness({ entries: 60, seed: 23, scenarios: true });
  // The first run is a backfill: one AIGOV-016 digest in place of per-entry alerts.
  expect((await h.sync()).status).toBe('succeeded');

  // The tenant lives on: the scenarios again (every per-entry rule), and the odd cases.
  h.sandbox.appendScenarios();
  const history = h.sandbox.history;
  history.appendEntry({ changeKind: 'CHANGE_KIND_NEW_ONE', set: { discoveryInterval: '7001s' } });
  history.appendEntry({ extraMetadata: { changeKind: undefined }, set: { discoveryInterval: '7002s' } });
  history.appendEntry({ changeKind: 'CHANGE_KIND_UNSPECIFIED', set: { discoveryInterval: '7003s' } });
  history.appendEntry({ snapshot: null });
  history.appendEntry({ set: { allowedClientTypes: ['MCP_CLIENT_TYPE_HOLOGRAM'], codeModeConcurrency: 8 } });
  history.appendEntry({
    actor: { kind: 'ACTOR_KIND_SUPPORT', userId: HOSTILE[0] as string },
    set: { enabled: true },
  });
  for (const [i, v] of HOSTILE.entries()) {
    history.appendEntry({
      actor: { kind: 'ACTOR_KIND_API', userId: v },
      annotations: [
        { kind: 'ANNOTATION_KIND_TICKET', rawValue: v, displayValue: v, displayUrl: 'https://t.example/1' },
        { kind: 'ANNOTATION_KIND_REASON', rawValue: v },
      ],
      extraMetadata: { traceId: v },
      set: { discoveryInterval: `${8001 + i}s`, untrustedJudgeDisable: i % 2 === 0 },
    });
  }
  history.appendEntry({ changeKind: 'CHANGE_KIND_HARD_DELETE' });
  history.appendEntry({ changeKind: 'CHANGE_KIND_CREATE', set: { requireToolApproval: true } });
  expect((await h.sync()).status).toBe('succeeded');

  // The source rewrites one stored entry and drops another: a reconcile alerts AIGOV-018.
  const served = history.entries() as Array<{ metadata: { id: string } }>;
  history.rewrite(served[20]?.metadata.id as string);
  history.remove(served[40]?.metadata.id as string);
  await reconcileTenant({
    database: h.database,
    config: h.config,
    logger: h.logger,
    tenant: h.tenant(),
    trigger: 'cli',
    alerting: createAlerting(h.config, h.logger, h.database),
  });
  // Three failed runs in a row (rejected credentials): AIGOV-017.
  for (let i = 0; i < 3; i++)
    expect((await h.sync({ tenant: { clientSecret: 'wrong' } })).status).toBe('failed');

  entities = [];
  for await (const e of iterateOcsfEntries(h.database.db, period, 7))
    entities.push(entryToEntityManagement(e, options));
  findings = [];
  for await (const a of iterateOcsfAlerts(h.database.db, period, 3))
    findings.push(alertToDetectionFinding(a, options));
  console.info(
    `OCSF events validated: ${entities.length} Entity Management (3004), ${findings.length} Detection Finding (2004)`,
  );
}, 60_000);

afterAll(async () => {
  await h?.close();
});

async function count(table: 'history_entry' | 'alert' | 'field_change'): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from ${sql.table(`govtrail.${table}`)}`.execute(h.database.db);
  return rows[0]?.n ?? 0;
}

describe('OCSF events of a realistic history', () => {
  it('one Entity Management event per stored entry, each once, in time order, every one valid', async () => {
    expect(entities.length).toBe(await count('history_entry'));
    expect(new Set(entities.map((e) => e.metadata.uid)).size).toBe(entities.length);
    const times = entities.map((e) => e.time);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(entities.reduce((n, e) => n + e.unmapped.field_changes.length, 0)).toBe(
      await count('field_change'),
    );
    // Round-tripped through JSON, as a SIEM receives them.
    expect(ocsfProblems(entities.map((e) => JSON.parse(JSON.stringify(e))))).toEqual([]);
  });

  it('covers every change kind, unknown values, an absent snapshot and hostile strings', () => {
    const activities = new Map(entities.map((e) => [e.activity_id, e.activity_name]));
    expect([...activities.keys()].sort((a, b) => a - b)).toEqual([0, 1, 3, 4, 99]);
    expect(activities.get(99)).toBe('CHANGE_KIND_NEW_ONE');
    expect(activities.get(0)).toBe('Unknown');
    // Absent and UNSPECIFIED are both "not given": one keeps its raw value as event_code.
    const unknown = entities.filter((e) => e.activity_id === 0);
    expect(unknown.map((e) => e.metadata.event_code ?? 'absent').sort()).toEqual([
      'CHANGE_KIND_UNSPECIFIED',
      'absent',
    ]);
    expect(entities.some((e) => e.unmapped.snapshot_absent === true && e.activity_id === 3)).toBe(true);
    expect(entities.some((e) => e.actor?.app_name === 'ACTOR_KIND_SCIM')).toBe(true);
    expect(entities.some((e) => e.entity_result?.data?.['auditVerbosity'] === 'AUDIT_VERBOSITY_DEBUG')).toBe(
      true,
    );
    expect(
      entities.some((e) =>
        e.unmapped.field_changes.some(
          (c) => c.field === 'extra_fields.codeModeConcurrency' && c.new_value === 8,
        ),
      ),
    ).toBe(true);
    const userIds = new Set(entities.map((e) => e.actor?.user?.uid));
    const tags = new Set(entities.flatMap((e) => (e.metadata.tags ?? []).map((t) => t.value)));
    const comments = new Set(entities.map((e) => e.comment));
    for (const v of HOSTILE) {
      expect(userIds).toContain(v);
      expect(tags).toContain(v);
      expect(comments).toContain(v);
    }
    for (const e of entities) expect(JSON.stringify(e)).not.toMatch(/\n/);
  });

  it('chains: each entry’s state before is the state after of the entry before it', () => {
    let after: unknown;
    for (const e of entities) {
      if (e.activity_id !== 1) expect(e.entity.data).toEqual(after);
      after = e.activity_id === 1 ? e.entity.data : e.entity_result?.data;
    }
  });

  it('one Detection Finding per alert, every one valid, digest, discrepancy and sync-failing included', async () => {
    expect(findings.length).toBe(await count('alert'));
    expect(ocsfProblems(findings.map((f) => JSON.parse(JSON.stringify(f))))).toEqual([]);
    const rules = new Set(findings.map((f) => f.finding_info.analytic.uid));
    for (const id of [
      'AIGOV-001',
      'AIGOV-002',
      'AIGOV-012',
      'AIGOV-014',
      'AIGOV-016',
      'AIGOV-017',
      'AIGOV-018',
    ])
      expect(rules).toContain(id);
    const digest = findings.find((f) => f.finding_info.analytic.uid === 'AIGOV-016');
    expect(digest?.finding_info).not.toHaveProperty('related_events');
    // The seeded history and the scenarios that came with it, stored by the first run.
    expect(
      (digest?.evidences[0]?.data['details'] as { entriesStored?: number } | undefined)?.entriesStored,
    ).toBeGreaterThan(60);
    const discrepancies = findings.filter((f) => f.finding_info.analytic.uid === 'AIGOV-018');
    expect(
      discrepancies
        .map(
          (f) =>
            (f.evidences[0]?.data['details'] as { discrepancy?: { kind?: string } } | undefined)?.discrepancy
              ?.kind,
        )
        .sort(),
    ).toEqual(['changed_at_source', 'missing_at_source']);
    expect(new Set(findings.map((f) => f.finding_info.uid)).size).toBe(findings.length);
    expect(new Set(findings.map((f) => f.metadata.uid)).size).toBe(findings.length);
  });

  it('links each finding about an entry to that entry’s Entity Management event', () => {
    const byUid = new Map(entities.map((e) => [e.metadata.uid, e]));
    let linked = 0;
    for (const f of findings) {
      for (const r of f.finding_info.related_events ?? []) {
        const e = byUid.get(r.uid);
        // A discrepancy may be about an entry the source no longer serves; it is still stored.
        expect(e, r.uid).toBeDefined();
        expect(r.type_uid).toBe(e?.type_uid);
        linked++;
      }
    }
    expect(linked).toBeGreaterThan(10);
  });
});
