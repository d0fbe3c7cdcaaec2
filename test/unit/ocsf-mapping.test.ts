/**
 * The pure OCSF mapping: history entries → Entity Management (3004), alerts → Detection Finding
 * (2004). Activity per change kind (unknown kinds kept as Other with their raw value), the entity
 * before and after, the actor, absent values left out (never null, never "unknown"), severities,
 * the finding's ids, hostile strings; every event built here validates against the 1.8.0 export.
 */
import { describe, expect, it } from 'vitest';
import type { AlertChange, AlertContext, AlertMessage, Severity } from '../../src/core/alert.js';
import type { FieldChange } from '../../src/core/diff.js';
import {
  alertToDetectionFinding,
  entryToEntityManagement,
  type OcsfEntryInput,
  type OcsfOptions,
  settingsEntityUid,
} from '../../src/core/ocsf/index.js';
import { validateOcsfEvent } from '../helpers/ocsf.js';

const options: OcsfOptions = { now: new Date('2026-03-01T12:00:00.000Z'), productVersion: '9.8.7' };

function entryInput(
  over: Partial<OcsfEntryInput['entry']> = {},
  rest: Partial<OcsfEntryInput> = {},
): OcsfEntryInput {
  return {
    entry: {
      tenantId: 'acme',
      entryId: '2q8mB3k5ZyR7cB0cUqYlq1XyTtV',
      createdAt: new Date('2025-01-06T09:00:00.123Z'),
      createdAtText: '2025-01-06T09:00:00.123456789Z',
      changeKind: 'CHANGE_KIND_PUT',
      actorKind: 'ACTOR_KIND_API',
      actorUserId: 'user-1',
      syslogEventId: 'syslog-1',
      traceId: 'trace-1',
      ...over,
    },
    annotations: [
      {
        key: null,
        kind: 'ANNOTATION_KIND_TICKET',
        rawValue: 'SEC-1',
        displayValue: 'SEC-1',
        displayLabel: null,
        displayUrl: 'https://t.example/SEC-1',
      },
      {
        key: null,
        kind: 'ANNOTATION_KIND_REASON',
        rawValue: 'pilot',
        displayValue: null,
        displayLabel: null,
        displayUrl: null,
      },
    ],
    snapshot: { requireToolApproval: false, auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
    previousSnapshot: { requireToolApproval: true, auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
    changes: [{ field: 'require_tool_approval', oldValue: true, newValue: false, direction: 'loosened' }],
    ...rest,
  };
}

function context(over: Partial<AlertContext> = {}): AlertContext {
  const change: AlertChange = {
    field: 'require_tool_approval',
    label: 'requireToolApproval',
    oldValue: true,
    newValue: false,
    direction: 'loosened',
  };
  return {
    tenantId: 'acme',
    entryId: 'E1',
    changedAt: '2025-01-06T09:00:00.123456789Z',
    changeKind: 'CHANGE_KIND_PUT',
    actor: { kind: 'ACTOR_KIND_API', userId: 'user-1' },
    tickets: [{ value: 'SEC-1', url: 'https://t.example/SEC-1' }],
    reasons: ['pilot'],
    changes: [change],
    allChanges: [change],
    syslogEventId: 'syslog-1',
    traceId: 'trace-1',
    runbook: 'Ask the actor why tool approval was turned off.',
    ruleName: 'tool-approval-disabled',
    details: {},
    ...over,
  };
}

function alert(over: Partial<AlertMessage> = {}): AlertMessage {
  return {
    alertId: '42',
    tenantId: 'acme',
    entryId: 'E1',
    ruleId: 'AIGOV-002',
    ruleVersion: 3,
    severity: 'high',
    title: 'Tool approval disabled',
    summary: 'requireToolApproval true → false by API user-1',
    context: context(),
    dedupeKey: 'AIGOV-002:acme:E1',
    createdAt: '2026-02-01T10:00:00.250Z',
    ...over,
  };
}

/** Paths of null or undefined values outside the free-form parts (`unmapped`, `data`). */
function nullPaths(v: unknown, at = ''): string[] {
  if (v === null || v === undefined) return [at];
  if (Array.isArray(v)) return v.flatMap((x, i) => nullPaths(x, `${at}[${i}]`));
  if (typeof v !== 'object') return [];
  return Object.entries(v).flatMap(([k, x]) =>
    k === 'unmapped' || k === 'data' ? [] : nullPaths(x, `${at}.${k}`),
  );
}

describe('entryToEntityManagement', () => {
  it.each([
    ['CHANGE_KIND_CREATE', 1, 'Create', 300401, 'Entity Management: Create'],
    ['CHANGE_KIND_PUT', 3, 'Update', 300403, 'Entity Management: Update'],
    ['CHANGE_KIND_HARD_DELETE', 4, 'Delete', 300404, 'Entity Management: Delete'],
    ['CHANGE_KIND_UNSPECIFIED', 0, 'Unknown', 300400, 'Entity Management: Unknown'],
    [null, 0, 'Unknown', 300400, 'Entity Management: Unknown'],
    ['CHANGE_KIND_NEW_ONE', 99, 'CHANGE_KIND_NEW_ONE', 300499, 'Entity Management: Other'],
  ])('maps change kind %s to activity %i (%s)', (kind, id, name, typeUid, typeName) => {
    const e = entryToEntityManagement(entryInput({ changeKind: kind }), options);
    expect(e).toMatchObject({
      class_uid: 3004,
      category_uid: 3,
      activity_id: id,
      activity_name: name,
      type_uid: typeUid,
      type_name: typeName,
    });
    if (kind === null) expect(e.metadata).not.toHaveProperty('event_code');
    else expect(e.metadata.event_code).toBe(kind);
    expect(validateOcsfEvent(e)).toEqual([]);
  });

  it('carries the entry: ms time, verbatim time, ids, product, tags, comment, diff', () => {
    const e = entryToEntityManagement(
      { ...entryInput(), loadedAt: new Date('2025-01-06T09:05:00Z') },
      options,
    );
    expect(e.time).toBe(Date.parse('2025-01-06T09:00:00.123Z'));
    expect(e.severity_id).toBe(1);
    expect(e.status_id).toBe(1);
    expect(e.metadata).toEqual({
      version: '1.8.0',
      product: { name: 'govtrail', vendor_name: 'govtrail', version: '9.8.7', feature: { name: 'history' } },
      uid: '2q8mB3k5ZyR7cB0cUqYlq1XyTtV',
      log_name: 'history',
      tenant_uid: 'acme',
      original_event_uid: 'syslog-1',
      correlation_uid: 'trace-1',
      event_code: 'CHANGE_KIND_PUT',
      original_time: '2025-01-06T09:00:00.123456789Z',
      tags: [
        { name: 'ticket', value: 'SEC-1' },
        { name: 'reason', value: 'pilot' },
      ],
      logged_time: Date.parse('2025-01-06T09:05:00Z'),
      processed_time: options.now.getTime(),
    });
    expect(e.actor).toEqual({ app_name: 'ACTOR_KIND_API', user: { uid: 'user-1' } });
    expect(e.observables).toEqual([
      { name: 'actor.user.uid', type_id: 31, type: 'User Object: uid', value: 'user-1' },
    ]);
    expect(e.comment).toBe('pilot');
    expect(e.unmapped.field_changes).toEqual([
      {
        field: 'require_tool_approval',
        name: 'requireToolApproval',
        old_value: true,
        new_value: false,
        direction: 'loosened',
      },
    ]);
    expect(e.unmapped.annotations?.[0]).toEqual({
      kind: 'ANNOTATION_KIND_TICKET',
      raw_value: 'SEC-1',
      display_value: 'SEC-1',
      display_url: 'https://t.example/SEC-1',
    });
    expect(e.message).toContain('requireToolApproval');
    expect(validateOcsfEvent(e)).toEqual([]);
  });

  it('an update has the settings before in entity and after in entity_result, exactly as served', () => {
    const e = entryToEntityManagement(entryInput(), options);
    expect(e.entity).toEqual({
      uid: settingsEntityUid('acme'),
      name: 'AI governance settings',
      type_id: 99,
      type: 'AI Governance Settings',
      data: { requireToolApproval: true, auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
    });
    // proto3 omits defaults: nothing is filled in, nothing is "unknown".
    const sparse = entryToEntityManagement(entryInput({}, { snapshot: { enabled: true } }), options);
    expect(sparse.entity_result?.data).toEqual({ enabled: true });
  });

  it('a create has the created settings in entity; a delete the deleted ones', () => {
    const created = entryToEntityManagement(
      entryInput({ changeKind: 'CHANGE_KIND_CREATE' }, { previousSnapshot: null }),
      options,
    );
    expect(created.entity.data).toEqual({
      requireToolApproval: false,
      auditVerbosity: 'AUDIT_VERBOSITY_FULL',
    });
    expect(created).not.toHaveProperty('entity_result');
    const deleted = entryToEntityManagement(
      entryInput({ changeKind: 'CHANGE_KIND_HARD_DELETE' }, { snapshot: null, changes: [] }),
      options,
    );
    expect(deleted.entity.data).toEqual({
      requireToolApproval: true,
      auditVerbosity: 'AUDIT_VERBOSITY_FULL',
    });
    expect(deleted).not.toHaveProperty('entity_result');
    for (const e of [created, deleted]) expect(validateOcsfEvent(e)).toEqual([]);
  });

  it('an entry without a snapshot says so and invents no state; a first entry has no before', () => {
    const absent = entryToEntityManagement(entryInput({}, { snapshot: null, changes: [] }), options);
    expect(absent.unmapped.snapshot_absent).toBe(true);
    expect(absent).not.toHaveProperty('entity_result');
    expect(absent.message).toContain('no settings snapshot');
    const first = entryToEntityManagement(entryInput({}, { previousSnapshot: null }), options);
    expect(first.entity).not.toHaveProperty('data');
    expect(first.entity_result?.data).toBeDefined();
    expect(first.unmapped).not.toHaveProperty('snapshot_absent');
    for (const e of [absent, first]) expect(validateOcsfEvent(e)).toEqual([]);
  });

  it('leaves absent values out: no actor, user, ids, tags or comment — never null', () => {
    const e = entryToEntityManagement(
      {
        ...entryInput({
          actorKind: null,
          actorUserId: null,
          syslogEventId: null,
          traceId: null,
          createdAtText: null,
        }),
        annotations: [],
      },
      options,
    );
    for (const key of ['actor', 'comment', 'observables']) expect(e).not.toHaveProperty(key);
    for (const key of ['original_event_uid', 'correlation_uid', 'original_time', 'tags', 'logged_time'])
      expect(e.metadata).not.toHaveProperty(key);
    expect(nullPaths(e)).toEqual([]);
    expect(validateOcsfEvent(e)).toEqual([]);
    // A kind without a user (Slack), and a user without a kind.
    const slack = entryToEntityManagement(
      entryInput({ actorKind: 'ACTOR_KIND_SLACK', actorUserId: null }),
      options,
    );
    expect(slack.actor).toEqual({ app_name: 'ACTOR_KIND_SLACK' });
    expect(slack).not.toHaveProperty('observables');
    const userOnly = entryToEntityManagement(entryInput({ actorKind: null }), options);
    expect(userOnly.actor).toEqual({ user: { uid: 'user-1' } });
    for (const x of [slack, userOnly]) expect(validateOcsfEvent(x)).toEqual([]);
  });

  it('passes values this version does not know through as received', () => {
    const e = entryToEntityManagement(
      entryInput(
        { actorKind: 'ACTOR_KIND_SCIM' },
        {
          annotations: [
            {
              key: 'approval_id',
              kind: 'ANNOTATION_KIND_APPROVAL',
              rawValue: 'A-1',
              displayValue: null,
              displayLabel: null,
              displayUrl: null,
            },
            {
              key: null,
              kind: null,
              rawValue: 'x',
              displayValue: null,
              displayLabel: null,
              displayUrl: null,
            },
            {
              key: null,
              kind: 'ANNOTATION_KIND_WORKFLOW',
              rawValue: null,
              displayValue: null,
              displayLabel: null,
              displayUrl: null,
            },
          ],
          snapshot: { auditVerbosity: 'AUDIT_VERBOSITY_DEBUG', codeModeConcurrency: 4 },
        },
      ),
      options,
    );
    expect(e.actor?.app_name).toBe('ACTOR_KIND_SCIM');
    expect(e.metadata.tags).toEqual([
      { name: 'approval', value: 'A-1' },
      { name: 'annotation', value: 'x' },
    ]);
    expect(e.unmapped.annotations).toHaveLength(3);
    expect(e.entity_result?.data).toEqual({
      auditVerbosity: 'AUDIT_VERBOSITY_DEBUG',
      codeModeConcurrency: 4,
    });
    expect(validateOcsfEvent(e)).toEqual([]);
  });

  it('is pure: the same input and options give the same event, and the input is not changed', () => {
    const input = entryInput();
    const frozen = JSON.stringify(input);
    const a = entryToEntityManagement(input, options);
    const b = entryToEntityManagement(input, { ...options });
    expect(a).toEqual(b);
    expect(JSON.stringify(input)).toBe(frozen);
    const later = entryToEntityManagement(input, {
      now: new Date('2027-01-01T00:00:00Z'),
      productVersion: '1.0.0',
    });
    expect(later.metadata.processed_time).toBe(Date.parse('2027-01-01T00:00:00Z'));
    expect(later.metadata.product.version).toBe('1.0.0');
    expect(later.time).toBe(a.time);
  });

  it('keeps hostile strings intact on one JSON line', () => {
    const hostile = [
      'line\nbreak\r\n',
      '"quoted", \\ back',
      '</script><script>alert(1)</script>',
      '=HYPERLINK("http://x")',
      'ünïcödé ✓ 🚀 \u2028\u2029',
      '\u0000\u001b[31mred',
      'x'.repeat(10_000),
    ];
    for (const h of hostile) {
      const changes: FieldChange[] = [
        { field: 'extra_fields.note', oldValue: null, newValue: h, direction: 'changed' },
      ];
      const e = entryToEntityManagement(
        entryInput(
          { actorUserId: h, syslogEventId: h, traceId: h, changeKind: h, createdAtText: h },
          {
            annotations: [{ key: h, kind: h, rawValue: h, displayValue: h, displayLabel: h, displayUrl: h }],
            snapshot: { note: h },
            changes,
          },
        ),
        options,
      );
      const line = JSON.stringify(e);
      expect(line).not.toContain('\n');
      expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(e)));
      expect(e.activity_name).toBe(h);
      expect(e.actor?.user?.uid).toBe(h);
      expect(validateOcsfEvent(JSON.parse(line))).toEqual([]);
    }
  });
});

describe('alertToDetectionFinding', () => {
  it.each([
    ['low', 2, 'Low'],
    ['medium', 3, 'Medium'],
    ['high', 4, 'High'],
    ['critical', 5, 'Critical'],
  ] as const)('maps severity %s to severity_id %i', (severity: Severity, id, caption) => {
    const f = alertToDetectionFinding(alert({ severity }), options);
    expect(f.severity_id).toBe(id);
    expect(f.severity).toBe(caption);
    expect(validateOcsfEvent(f)).toEqual([]);
  });

  it('carries the alert: ids, rule, the related entry, evidence, target, runbook', () => {
    const f = alertToDetectionFinding(alert(), options);
    expect(f).toMatchObject({
      class_uid: 2004,
      category_uid: 2,
      activity_id: 1,
      type_uid: 200401,
      status_id: 1,
      status: 'New',
      is_alert: true,
      time: Date.parse('2026-02-01T10:00:00.250Z'),
      message: 'Tool approval disabled',
      remediation: { desc: 'Ask the actor why tool approval was turned off.' },
    });
    expect(f.metadata).toMatchObject({
      version: '1.8.0',
      uid: 'AIGOV-002:acme:E1:create',
      tenant_uid: 'acme',
      event_code: 'AIGOV-002',
      correlation_uid: 'trace-1',
      processed_time: options.now.getTime(),
      product: { name: 'govtrail', vendor_name: 'govtrail', version: '9.8.7', feature: { name: 'alerts' } },
    });
    expect(f.finding_info).toEqual({
      uid: 'AIGOV-002:acme:E1',
      title: 'Tool approval disabled',
      desc: 'requireToolApproval true → false by API user-1',
      analytic: { type_id: 1, type: 'Rule', uid: 'AIGOV-002', name: 'tool-approval-disabled', version: '3' },
      created_time: f.time,
      related_events: [{ uid: 'E1', type_uid: 300403, type_name: 'Entity Management: Update' }],
    });
    expect(f.evidences[0]?.actor).toEqual({ app_name: 'ACTOR_KIND_API', user: { uid: 'user-1' } });
    expect(f.evidences[0]?.data['changes']).toEqual([
      {
        field: 'require_tool_approval',
        name: 'requireToolApproval',
        old_value: true,
        new_value: false,
        direction: 'loosened',
      },
    ]);
    expect(f.resources).toEqual([
      {
        uid: 'acme/ai-governance-settings',
        name: 'AI governance settings',
        type: 'AI Governance Settings',
        role_id: 1,
        role: 'Target',
      },
    ]);
    expect(f.unmapped).toEqual({
      alert_id: '42',
      tickets: [{ value: 'SEC-1', url: 'https://t.example/SEC-1' }],
      reasons: ['pilot'],
      syslog_event_id: 'syslog-1',
      trace_id: 'trace-1',
    });
    expect(nullPaths(f)).toEqual([]);
    expect(validateOcsfEvent(f)).toEqual([]);
  });

  it('links a hard delete to the Delete event of its entry', () => {
    const f = alertToDetectionFinding(
      alert({
        ruleId: 'AIGOV-001',
        context: context({ changeKind: 'CHANGE_KIND_HARD_DELETE', changes: [] }),
      }),
      options,
    );
    expect(f.finding_info.related_events).toEqual([
      { uid: 'E1', type_uid: 300404, type_name: 'Entity Management: Delete' },
    ]);
    expect(validateOcsfEvent(f)).toEqual([]);
  });

  it('a run-level alert (backfill digest) has no related entry and keeps its details', () => {
    const details = { runId: 7, entriesStored: 120, firstEntry: null, perRuleCounts: { 'AIGOV-013': 4 } };
    const f = alertToDetectionFinding(
      alert({
        ruleId: 'AIGOV-016',
        entryId: null,
        severity: 'low',
        dedupeKey: 'AIGOV-016:acme:run-7',
        context: context({
          entryId: null,
          changeKind: null,
          changedAt: null,
          actor: { kind: null, userId: null },
          tickets: [],
          reasons: [],
          changes: [],
          allChanges: [],
          syslogEventId: null,
          traceId: null,
          details,
        }),
      }),
      options,
    );
    expect(f.finding_info).not.toHaveProperty('related_events');
    expect(f.finding_info.uid).toBe('AIGOV-016:acme:run-7');
    expect(f.evidences).toEqual([{ data: { changes: [], details } }]);
    expect(f).not.toHaveProperty('observables');
    expect(f.metadata).not.toHaveProperty('correlation_uid');
    expect(f.unmapped).toEqual({ alert_id: '42' });
    expect(nullPaths(f)).toEqual([]);
    expect(validateOcsfEvent(f)).toEqual([]);
  });

  it('a source discrepancy alert keeps the discrepancy facts as evidence', () => {
    const discrepancy = {
      kind: 'changed_at_source',
      discrepancyId: 3,
      runId: 9,
      storedSha256: 'aa',
      sourceSha256: 'bb',
    };
    const f = alertToDetectionFinding(
      alert({
        ruleId: 'AIGOV-018',
        dedupeKey: 'AIGOV-018:acme:E1:changed_at_source:bb',
        context: context({ details: { discrepancy } }),
      }),
      options,
    );
    expect(f.finding_info.uid).toBe('AIGOV-018:acme:E1:changed_at_source:bb');
    expect(f.evidences[0]?.data['details']).toEqual({ discrepancy });
    expect(validateOcsfEvent(f)).toEqual([]);
  });

  it('tolerates a stored context missing parts, and an unknown severity is Other with its own name', () => {
    const sparse = { tenantId: 'acme' } as unknown as AlertContext;
    const f = alertToDetectionFinding(
      alert({ context: sparse, severity: 'severe' as Severity, createdAt: 'not a time' }),
      options,
    );
    expect(f.severity_id).toBe(99);
    expect(f.severity).toBe('severe');
    expect(f.time).toBe(options.now.getTime());
    expect(f.finding_info.analytic).not.toHaveProperty('name');
    expect(f).not.toHaveProperty('remediation');
    expect(f.finding_info.related_events).toEqual([
      { uid: 'E1', type_uid: 300400, type_name: 'Entity Management: Unknown' },
    ]);
    expect(nullPaths(f)).toEqual([]);
    expect(validateOcsfEvent(f)).toEqual([]);
  });
});
