/**
 * The tolerant normaliser (docs/design/sync.md S6, docs/design/data-model.md): null, absent and odd-typed
 * values are stored as received, never a crash; proto3 JSON omits empty lists and default values, so absent
 * is the default, not "unknown". Every test asserts the exact rows and warnings.
 */
import { describe, expect, it } from 'vitest';
import { entryKeyOf, normaliseEntry } from '../../src/core/normalise/entry.js';
import type { AnnotationRow, NormalisedEntry, SnapshotRow } from '../../src/core/normalise/types.js';

/** KSUID of 2017-10-10T04:00:47Z (the example of the reference implementation's README). */
const KSUID = '0ujtsYcgvSTl8PAuAdqWYSMnLOv';
const AT = '2025-01-02T03:04:05.678Z';
const META = { id: KSUID, createdAt: AT };

function ok(raw: unknown, tenant = 't'): NormalisedEntry {
  const r = normaliseEntry(tenant, raw);
  if (!r.ok) throw new Error(`rejected: ${r.reason}`);
  return r.value;
}

function reason(raw: unknown): string {
  const r = normaliseEntry('t', raw);
  if (r.ok) throw new Error('accepted');
  expect(r.raw).toBe(raw);
  return r.reason;
}

/** The row of a snapshot whose every field is at its proto3 default (omitted on the wire). */
const DEFAULT_ROW: SnapshotRow = {
  tenantId: 't',
  entryId: KSUID,
  allowedClientTypes: null,
  allowsAllClientTypes: true,
  auditVerbosity: null,
  autoDiscoveryEnabled: false,
  defaultToolClassification: null,
  discoveryInterval: null,
  inactivityCloseAfter: null,
  inactivityHideAfter: null,
  retentionDeleteAfter: null,
  enabled: false,
  preferCodeModeOverDirectTools: false,
  requireToolApproval: false,
  surfaceRequestableTools: false,
  settingsCreatedAt: null,
  settingsUpdatedAt: null,
  extraFields: {},
};

function snapshotOf(snapshot: unknown): { row: SnapshotRow | null; warnings: readonly string[] } {
  const v = ok({ metadata: META, snapshot });
  return { row: v.snapshot, warnings: v.warnings };
}

function annotationsOf(annotations: unknown): {
  rows: readonly AnnotationRow[];
  warnings: readonly string[];
} {
  const v = ok({ metadata: { ...META, annotations } });
  return { rows: v.annotations, warnings: v.warnings };
}

function emptyAnnotation(ordinal: number): AnnotationRow {
  return {
    tenantId: 't',
    entryId: KSUID,
    ordinal,
    key: null,
    kind: null,
    rawValue: null,
    displayValue: null,
    displayLabel: null,
    displayUrl: null,
  };
}

describe('normaliseEntry: a minimal entry (proto3 JSON omits every default)', () => {
  it('stores an entry with only id and createdAt: NULL columns, no annotations, no snapshot, no warning', () => {
    const raw = { metadata: META };
    const v = ok(raw, 'acme');
    expect(v).toEqual({
      entry: {
        tenantId: 'acme',
        entryId: KSUID,
        createdAtText: AT,
        createdAtKey: '2025-01-02T03:04:05.678000000Z',
        createdAt: new Date(AT),
        changeKind: null,
        actorKind: null,
        actorUserId: null,
        syslogEventId: null,
        traceId: null,
        raw,
        servedDigest: null,
      },
      annotations: [],
      snapshot: null,
      snapshotWire: null,
      warnings: [],
    });
    expect(v.entry.raw).toBe(raw);
  });

  it('treats null metadata fields like absent ones', () => {
    const v = ok({
      metadata: {
        ...META,
        changeKind: null,
        actor: null,
        annotations: null,
        syslogEventId: null,
        traceId: null,
      },
      snapshot: null,
    });
    expect(v.entry).toMatchObject({
      changeKind: null,
      actorKind: null,
      actorUserId: null,
      syslogEventId: null,
      traceId: null,
    });
    expect(v.annotations).toEqual([]);
    expect(v.snapshot).toBeNull();
    expect(v.snapshotWire).toBeNull();
    expect(v.warnings).toEqual([]);
  });

  it('stores the empty actor user id, syslog event id and trace id as NULL, as docs/design/data-model.md says', () => {
    const v = ok({
      metadata: {
        ...META,
        actor: { kind: 'ACTOR_KIND_WORKFLOW', userId: '' },
        syslogEventId: '',
        traceId: '',
      },
    });
    expect(v.entry).toMatchObject({
      actorKind: 'ACTOR_KIND_WORKFLOW',
      actorUserId: null,
      syslogEventId: null,
      traceId: null,
    });
    expect(v.warnings).toEqual([]);
  });

  it('keeps the actor user id, syslog event id and trace id when they are set', () => {
    const v = ok({
      metadata: {
        ...META,
        actor: { kind: 'ACTOR_KIND_SUPPORT', userId: KSUID },
        syslogEventId: '2vYJmWZ0f1tOa8b6Gm8o0Vp7kXc',
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      },
    });
    expect(v.entry).toMatchObject({
      actorKind: 'ACTOR_KIND_SUPPORT',
      actorUserId: KSUID,
      syslogEventId: '2vYJmWZ0f1tOa8b6Gm8o0Vp7kXc',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    });
    expect(v.warnings).toEqual([]);
  });

  it('keeps unknown metadata fields and unknown enum values as received', () => {
    const raw = {
      metadata: {
        ...META,
        changeKind: 'CHANGE_KIND_TELEPORT',
        actor: { kind: 'ACTOR_KIND_ROBOT', userId: KSUID, extra: 1 },
        newThing: { a: 1 },
      },
      sibling: true,
    };
    const v = ok(raw);
    expect(v.entry).toMatchObject({
      changeKind: 'CHANGE_KIND_TELEPORT',
      actorKind: 'ACTOR_KIND_ROBOT',
      actorUserId: KSUID,
    });
    expect(v.entry.raw).toBe(raw);
    expect(v.warnings).toEqual([]);
  });
});

describe('normaliseEntry: entries that cannot be keyed are rejected with the reason', () => {
  it('names what the entry is when it is not an object', () => {
    expect(reason(null)).toBe('entry is null, not an object');
    expect(reason([{ metadata: META }])).toBe('entry is an array, not an object');
    expect(reason('entry')).toBe('entry is string, not an object');
    expect(reason(42)).toBe('entry is number, not an object');
    expect(reason(undefined)).toBe('entry is undefined, not an object');
  });

  it('rejects an entry without a metadata object', () => {
    for (const raw of [{}, { metadata: null }, { metadata: 'x' }, { metadata: [META] }]) {
      expect(reason(raw)).toBe('entry has no metadata object, so no metadata.id');
    }
  });

  it('rejects an absent, empty, blank or non-string metadata.id', () => {
    for (const id of [undefined, null, '', '   ', 42, [KSUID]]) {
      expect(reason({ metadata: { id, createdAt: AT } })).toBe('entry has no metadata.id');
    }
  });

  it('rejects an entry dated neither by createdAt nor by a KSUID id', () => {
    expect(reason({ metadata: { id: 'not-a-ksuid', createdAt: 'noon' } })).toBe(
      'entry has neither a valid metadata.createdAt nor a KSUID id to date it by',
    );
    expect(reason({ metadata: { id: 'not-a-ksuid' } })).toBe(
      'entry has neither a valid metadata.createdAt nor a KSUID id to date it by',
    );
  });

  it('accepts a non-KSUID id when createdAt dates the entry', () => {
    expect(ok({ metadata: { id: 'not-a-ksuid', createdAt: AT } }).entry.entryId).toBe('not-a-ksuid');
  });
});

describe('normaliseEntry: createdAt', () => {
  const BY_KSUID = {
    createdAtKey: '2017-10-10T04:00:47.000000000Z',
    createdAt: new Date('2017-10-10T04:00:47Z'),
  };

  it('dates an entry without createdAt by its KSUID, at second precision, with a warning', () => {
    for (const createdAt of [undefined, null, '']) {
      const v = ok({ metadata: { id: KSUID, createdAt } });
      expect(v.entry).toMatchObject({ createdAtText: null, ...BY_KSUID });
      expect(v.warnings).toEqual(['metadata.createdAt is absent; dated by the KSUID (second precision)']);
    }
  });

  it('keeps an unreadable createdAt text verbatim, dates the entry by its KSUID and says why', () => {
    const v = ok({ metadata: { id: KSUID, createdAt: 'noon' } });
    expect(v.entry).toMatchObject({ createdAtText: 'noon', ...BY_KSUID });
    expect(v.warnings).toEqual([
      'metadata.createdAt "noon" is not RFC 3339; dated by the KSUID (second precision)',
    ]);
  });

  it('keeps no text for a createdAt that is not a string', () => {
    const v = ok({ metadata: { id: KSUID, createdAt: 1_700_000_000 } });
    expect(v.entry).toMatchObject({ createdAtText: null, ...BY_KSUID });
    expect(v.warnings).toHaveLength(1);
  });

  it('keeps the verbatim text (offset, nanoseconds) and a UTC key of the same instant', () => {
    const v = ok({ metadata: { id: KSUID, createdAt: '2025-01-02T05:04:05.123456789+02:00' } });
    expect(v.entry.createdAtText).toBe('2025-01-02T05:04:05.123456789+02:00');
    expect(v.entry.createdAtKey).toBe('2025-01-02T03:04:05.123456789Z');
    expect(v.entry.createdAt).toEqual(new Date('2025-01-02T03:04:05.123Z'));
    expect(v.warnings).toEqual([]);
  });
});

describe('normaliseEntry: text columns', () => {
  it('replaces every NUL in a text column, not only the first', () => {
    const v = ok({ metadata: { ...META, changeKind: 'A\u0000B\u0000C' } });
    expect(v.entry.changeKind).toBe('A\uFFFDB\uFFFDC');
  });

  it('stores a non-string enum as its JSON text, with a warning naming the type', () => {
    const v = ok({
      metadata: {
        ...META,
        changeKind: 7,
        actor: { kind: ['ACTOR_KIND_API'], userId: { id: 1 } },
        syslogEventId: 12,
        traceId: true,
      },
    });
    expect(v.entry).toMatchObject({
      changeKind: '7',
      actorKind: '["ACTOR_KIND_API"]',
      actorUserId: '{"id":1}',
      syslogEventId: '12',
      traceId: 'true',
    });
    expect(v.warnings).toEqual([
      'metadata.changeKind is number, stored as JSON text',
      'metadata.actor.kind is an array, stored as JSON text',
      'metadata.actor.userId is object, stored as JSON text',
      'metadata.syslogEventId is number, stored as JSON text',
      'metadata.traceId is boolean, stored as JSON text',
    ]);
  });

  it('warns about an actor that is not an object and stores no actor columns', () => {
    for (const actor of ['ACTOR_KIND_API', ['ACTOR_KIND_API'], 3]) {
      const v = ok({ metadata: { ...META, actor } });
      expect(v.entry.actorKind).toBeNull();
      expect(v.entry.actorUserId).toBeNull();
      expect(v.warnings).toEqual(['metadata.actor is not an object; raw keeps it']);
    }
  });
});

describe('normaliseEntry: snapshot presence', () => {
  it('has no settings_snapshot row for a null or absent snapshot, silently', () => {
    expect(snapshotOf(null)).toEqual({ row: null, warnings: [] });
    const absent = ok({ metadata: META });
    expect(absent.snapshot).toBeNull();
    expect(absent.warnings).toEqual([]);
  });

  it('has no row, and warns, for a snapshot that is not an object', () => {
    for (const snapshot of ['x', ['MCP_CLIENT_TYPE_PERSONAL'], 0, false]) {
      const v = ok({ metadata: META, snapshot });
      expect(v.snapshot).toBeNull();
      expect(v.snapshotWire).toBeNull();
      expect(v.warnings).toEqual(['snapshot is not an object; no settings_snapshot row, raw keeps it']);
    }
  });

  it('maps an empty snapshot to every default: booleans false, all client types, the rest NULL', () => {
    const snapshot = {};
    const v = ok({ metadata: META, snapshot });
    expect(v.snapshot).toEqual(DEFAULT_ROW);
    expect(v.snapshotWire).toBe(snapshot);
    expect(v.warnings).toEqual([]);
  });

  it('maps a snapshot whose every field is null exactly like an empty one', () => {
    expect(
      snapshotOf({
        allowedClientTypes: null,
        auditVerbosity: null,
        autoDiscoveryEnabled: null,
        createdAt: null,
        updatedAt: null,
        defaultClientLifecycle: null,
        defaultToolClassification: null,
        discoveryInterval: null,
        enabled: null,
        preferCodeModeOverDirectTools: null,
        requireToolApproval: null,
        surfaceRequestableTools: null,
      }),
    ).toEqual({ row: DEFAULT_ROW, warnings: [] });
  });
});

describe('normaliseEntry: defaultClientLifecycle', () => {
  it('null, absent and {} all leave the three durations NULL, without a warning', () => {
    for (const lc of [null, undefined, {}]) {
      expect(snapshotOf({ defaultClientLifecycle: lc })).toEqual({ row: DEFAULT_ROW, warnings: [] });
    }
  });

  it('maps the three durations, and keeps unknown lifecycle keys in extra_fields', () => {
    const { row, warnings } = snapshotOf({
      defaultClientLifecycle: {
        inactivityCloseAfter: '86400s',
        inactivityHideAfter: '0.5s',
        retentionDeleteAfter: '0s',
        archiveAfter: '60s',
        nested: null,
      },
    });
    expect(row).toEqual({
      ...DEFAULT_ROW,
      inactivityCloseAfter: '86400 seconds',
      inactivityHideAfter: '0.5 seconds',
      retentionDeleteAfter: '0 seconds',
      extraFields: { 'defaultClientLifecycle.archiveAfter': '60s', 'defaultClientLifecycle.nested': null },
    });
    expect(warnings).toEqual([]);
  });

  it('keeps a lifecycle that is not an object in extra_fields, whole, with a warning', () => {
    for (const lc of ['3600s', ['3600s'], 7, true]) {
      expect(snapshotOf({ defaultClientLifecycle: lc })).toEqual({
        row: { ...DEFAULT_ROW, extraFields: { defaultClientLifecycle: lc } },
        warnings: ['snapshot.defaultClientLifecycle is not an object; kept in extra_fields'],
      });
    }
  });

  it('leaves an unreadable lifecycle duration NULL and names it in the warning', () => {
    expect(
      snapshotOf({
        defaultClientLifecycle: {
          inactivityCloseAfter: '1h',
          inactivityHideAfter: '',
          retentionDeleteAfter: 3600,
        },
      }),
    ).toEqual({
      row: DEFAULT_ROW,
      warnings: [
        'inactivityCloseAfter is not a duration ("1h"); column left NULL, raw keeps it',
        'inactivityHideAfter is not a duration (""); column left NULL, raw keeps it',
        'retentionDeleteAfter is not a duration (3600); column left NULL, raw keeps it',
      ],
    });
  });
});

describe('normaliseEntry: allowedClientTypes', () => {
  it('an absent, null or empty list means all types are permitted', () => {
    expect(snapshotOf({}).row).toMatchObject({ allowedClientTypes: null, allowsAllClientTypes: true });
    expect(snapshotOf({ allowedClientTypes: null }).row).toMatchObject({
      allowedClientTypes: null,
      allowsAllClientTypes: true,
    });
    expect(snapshotOf({ allowedClientTypes: [] }).row).toMatchObject({
      allowedClientTypes: [],
      allowsAllClientTypes: true,
    });
  });

  it('a non-empty list permits only its types, unknown values kept as received', () => {
    expect(snapshotOf({ allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL', 'MCP_CLIENT_TYPE_ROBOT'] })).toEqual(
      {
        row: {
          ...DEFAULT_ROW,
          allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL', 'MCP_CLIENT_TYPE_ROBOT'],
          allowsAllClientTypes: false,
        },
        warnings: [],
      },
    );
  });

  it('stores a non-string item as its JSON text, with a warning naming its position', () => {
    expect(
      snapshotOf({ allowedClientTypes: ['MCP_CLIENT_TYPE_SHARED', 7, null, { t: 'x' }, 'A\u0000'] }),
    ).toEqual({
      row: {
        ...DEFAULT_ROW,
        allowedClientTypes: ['MCP_CLIENT_TYPE_SHARED', '7', 'null', '{"t":"x"}', 'A\uFFFD'],
        allowsAllClientTypes: false,
      },
      warnings: [
        'snapshot.allowedClientTypes[1] is not a string; stored as JSON text',
        'snapshot.allowedClientTypes[2] is not a string; stored as JSON text',
        'snapshot.allowedClientTypes[3] is not a string; stored as JSON text',
      ],
    });
  });

  it('stores an undefined item (possible only from a JavaScript caller) as null text instead of crashing', () => {
    expect(snapshotOf({ allowedClientTypes: [undefined] })).toEqual({
      row: { ...DEFAULT_ROW, allowedClientTypes: ['null'], allowsAllClientTypes: false },
      warnings: ['snapshot.allowedClientTypes[0] is not a string; stored as JSON text'],
    });
  });

  it('a value that is not a list leaves the column NULL and does not claim all types', () => {
    for (const types of ['MCP_CLIENT_TYPE_PERSONAL', { 0: 'MCP_CLIENT_TYPE_PERSONAL' }, 3]) {
      expect(snapshotOf({ allowedClientTypes: types })).toEqual({
        row: { ...DEFAULT_ROW, allowedClientTypes: null, allowsAllClientTypes: false },
        warnings: ['snapshot.allowedClientTypes is not a list; column left NULL, raw keeps it'],
      });
    }
  });
});

describe('normaliseEntry: booleans (proto3: absent or null = false)', () => {
  const BOOLEANS = [
    ['autoDiscoveryEnabled', 'autoDiscoveryEnabled'],
    ['enabled', 'enabled'],
    ['preferCodeModeOverDirectTools', 'preferCodeModeOverDirectTools'],
    ['requireToolApproval', 'requireToolApproval'],
    ['surfaceRequestableTools', 'surfaceRequestableTools'],
  ] as const;

  it.each(BOOLEANS)('%s: true and false are kept', (wire, column) => {
    expect(snapshotOf({ [wire]: true })).toEqual({ row: { ...DEFAULT_ROW, [column]: true }, warnings: [] });
    expect(snapshotOf({ [wire]: false })).toEqual({ row: { ...DEFAULT_ROW, [column]: false }, warnings: [] });
  });

  it.each(BOOLEANS)(
    '%s: a value that is not a boolean leaves the column NULL, with a warning',
    (wire, column) => {
      for (const odd of ['true', 1, 0, [], {}]) {
        expect(snapshotOf({ [wire]: odd })).toEqual({
          row: { ...DEFAULT_ROW, [column]: null },
          warnings: [
            `snapshot.${wire} is not a boolean (${JSON.stringify(odd)}); column left NULL, raw keeps it`,
          ],
        });
      }
    },
  );
});

describe('normaliseEntry: enums, durations and timestamps of the snapshot', () => {
  it('keeps enum values as received, unknown ones included', () => {
    expect(
      snapshotOf({
        auditVerbosity: 'AUDIT_VERBOSITY_LOUD',
        defaultToolClassification: 'TOOL_CLASSIFICATION_UNSPECIFIED',
      }),
    ).toEqual({
      row: {
        ...DEFAULT_ROW,
        auditVerbosity: 'AUDIT_VERBOSITY_LOUD',
        defaultToolClassification: 'TOOL_CLASSIFICATION_UNSPECIFIED',
      },
      warnings: [],
    });
  });

  it('stores a non-string enum as JSON text with a warning', () => {
    expect(
      snapshotOf({ auditVerbosity: 2, defaultToolClassification: ['TOOL_CLASSIFICATION_READ'] }),
    ).toEqual({
      row: { ...DEFAULT_ROW, auditVerbosity: '2', defaultToolClassification: '["TOOL_CLASSIFICATION_READ"]' },
      warnings: [
        'snapshot.auditVerbosity is number, stored as JSON text',
        'snapshot.defaultToolClassification is an array, stored as JSON text',
      ],
    });
  });

  it('maps discoveryInterval to an interval, or leaves it NULL with a warning', () => {
    expect(snapshotOf({ discoveryInterval: '1.5s' }).row?.discoveryInterval).toBe('1.5 seconds');
    expect(snapshotOf({ discoveryInterval: 'hourly' })).toEqual({
      row: DEFAULT_ROW,
      warnings: ['snapshot.discoveryInterval is not a duration ("hourly"); column left NULL, raw keeps it'],
    });
  });

  it('maps createdAt and updatedAt to nanosecond keys; empty is NULL, unreadable is NULL with a warning', () => {
    expect(
      snapshotOf({ createdAt: '2025-01-01T01:00:00.5+01:00', updatedAt: '2025-01-02T00:00:00Z' }).row,
    ).toEqual({
      ...DEFAULT_ROW,
      settingsCreatedAt: '2025-01-01T00:00:00.500000000Z',
      settingsUpdatedAt: '2025-01-02T00:00:00.000000000Z',
    });
    expect(snapshotOf({ createdAt: '', updatedAt: '' })).toEqual({ row: DEFAULT_ROW, warnings: [] });
    expect(snapshotOf({ createdAt: 'yesterday', updatedAt: 5 })).toEqual({
      row: DEFAULT_ROW,
      warnings: [
        'snapshot.createdAt is not an RFC 3339 time ("yesterday"); column left NULL, raw keeps it',
        'snapshot.updatedAt is not an RFC 3339 time (5); column left NULL, raw keeps it',
      ],
    });
  });

  it('keeps every unmapped snapshot field in extra_fields, null values included', () => {
    expect(
      snapshotOf({ codeModeConcurrency: 3, untrustedJudgeDisable: null, list: null }).row?.extraFields,
    ).toEqual({
      codeModeConcurrency: 3,
      untrustedJudgeDisable: null,
      list: null,
    });
  });
});

describe('normaliseEntry: annotations', () => {
  it('null, absent and [] give no rows and no warning', () => {
    for (const list of [null, undefined, []]) expect(annotationsOf(list)).toEqual({ rows: [], warnings: [] });
  });

  it('a value that is not a list gives no rows and a warning', () => {
    for (const list of ['ticket', { 0: {} }, 1]) {
      expect(annotationsOf(list)).toEqual({
        rows: [],
        warnings: ['metadata.annotations is not a list; raw keeps it'],
      });
    }
  });

  it('stores an item that is not an object as a row of NULL columns, keeping its ordinal', () => {
    expect(annotationsOf([null, 'SEC-1', ['x']])).toEqual({
      rows: [emptyAnnotation(0), emptyAnnotation(1), emptyAnnotation(2)],
      warnings: [
        'annotation 0 is not an object; stored with empty columns',
        'annotation 1 is not an object; stored with empty columns',
        'annotation 2 is not an object; stored with empty columns',
      ],
    });
  });

  it('keeps an empty raw value, display value and label, but stores an empty URL, key and kind as NULL', () => {
    expect(
      annotationsOf([
        { key: '', kind: '', rawValue: '', displayValue: '', displayLabel: '', displayUrl: '' },
      ]),
    ).toEqual({
      rows: [{ ...emptyAnnotation(0), rawValue: '', displayValue: '', displayLabel: '' }],
      warnings: [],
    });
  });

  it('maps every annotation field, unknown kinds kept as received', () => {
    expect(
      annotationsOf([
        {
          key: 'ticket_id',
          kind: 'ANNOTATION_KIND_PAGER',
          rawValue: 'SEC-1',
          displayValue: 'SEC 1',
          displayLabel: 'Ticket',
          displayUrl: 'https://jira.example/browse/SEC-1',
          extra: 1,
        },
      ]),
    ).toEqual({
      rows: [
        {
          tenantId: 't',
          entryId: KSUID,
          ordinal: 0,
          key: 'ticket_id',
          kind: 'ANNOTATION_KIND_PAGER',
          rawValue: 'SEC-1',
          displayValue: 'SEC 1',
          displayLabel: 'Ticket',
          displayUrl: 'https://jira.example/browse/SEC-1',
        },
      ],
      warnings: [],
    });
  });

  it('stores sixteen annotations silently and more than sixteen with a warning', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}` }));
    const sixteen = annotationsOf(list(16));
    expect(sixteen.rows).toHaveLength(16);
    expect(sixteen.warnings).toEqual([]);
    const seventeen = annotationsOf(list(17));
    expect(seventeen.rows.map((r) => r.ordinal)).toEqual(Array.from({ length: 17 }, (_, i) => i));
    expect(seventeen.warnings).toEqual(['17 annotations, more than the documented 16; all stored']);
  });

  it('stores a key outside ^[a-z][a-z0-9_.-]{0,63}$ with a warning', () => {
    const longest = `a${'b'.repeat(63)}`;
    expect(annotationsOf([{ key: longest }, { key: 'x' }, { key: 'a.b-c_9' }]).warnings).toEqual([]);
    expect(annotationsOf([{ key: `${longest}c` }, { key: 'Ticket' }, { key: '9a' }, { key: 'a b' }])).toEqual(
      {
        rows: [
          { ...emptyAnnotation(0), key: `${longest}c` },
          { ...emptyAnnotation(1), key: 'Ticket' },
          { ...emptyAnnotation(2), key: '9a' },
          { ...emptyAnnotation(3), key: 'a b' },
        ],
        warnings: [
          `annotation 0 key "${longest}c" is outside the documented pattern; stored`,
          'annotation 1 key "Ticket" is outside the documented pattern; stored',
          'annotation 2 key "9a" is outside the documented pattern; stored',
          'annotation 3 key "a b" is outside the documented pattern; stored',
        ],
      },
    );
  });

  it('stores a raw value over 512 bytes (UTF-8) with a warning, and one of 512 bytes silently', () => {
    // '€' is three bytes: 170 of them are 510 bytes, 171 are 513.
    const silent = [
      { rawValue: 'x'.repeat(512) },
      { rawValue: 'é'.repeat(256) },
      { rawValue: '€'.repeat(170) },
    ];
    expect(annotationsOf(silent).warnings).toEqual([]);
    const { rows, warnings } = annotationsOf([
      { rawValue: 'x'.repeat(513) },
      { rawValue: 'é'.repeat(257) },
      { rawValue: '€'.repeat(171) },
    ]);
    expect(rows.map((r) => r.rawValue)).toEqual(['x'.repeat(513), 'é'.repeat(257), '€'.repeat(171)]);
    expect(warnings).toEqual([
      'annotation 0 rawValue is longer than 512 bytes; stored',
      'annotation 1 rawValue is longer than 512 bytes; stored',
      'annotation 2 rawValue is longer than 512 bytes; stored',
    ]);
  });

  it('stores non-string annotation fields as JSON text with a warning naming the annotation', () => {
    expect(
      annotationsOf([
        {
          key: 5,
          kind: ['ANNOTATION_KIND_TICKET'],
          rawValue: 12,
          displayValue: { v: 1 },
          displayLabel: 3.5,
          displayUrl: false,
        },
      ]),
    ).toEqual({
      rows: [
        {
          ...emptyAnnotation(0),
          key: '5',
          kind: '["ANNOTATION_KIND_TICKET"]',
          rawValue: '12',
          displayValue: '{"v":1}',
          displayLabel: '3.5',
          displayUrl: 'false',
        },
      ],
      warnings: [
        'annotation 0 key is number, stored as JSON text',
        'annotation 0 key "5" is outside the documented pattern; stored',
        'annotation 0 rawValue is number, stored as JSON text',
        'annotation 0 kind is an array, stored as JSON text',
        'annotation 0 displayValue is object, stored as JSON text',
        'annotation 0 displayLabel is number, stored as JSON text',
        'annotation 0 displayUrl is boolean, stored as JSON text',
      ],
    });
  });
});

describe('entryKeyOf: the key a run looks an entry up by', () => {
  it('gives the id, the UTC key and the verbatim createdAt text', () => {
    expect(entryKeyOf({ metadata: { id: KSUID, createdAt: '2025-01-02T05:04:05.123456789+02:00' } })).toEqual(
      {
        entryId: KSUID,
        createdAtKey: '2025-01-02T03:04:05.123456789Z',
        createdAtText: '2025-01-02T05:04:05.123456789+02:00',
      },
    );
  });

  it('dates an entry without a readable createdAt by its KSUID, keeping unreadable text', () => {
    const byKsuid = { entryId: KSUID, createdAtKey: '2017-10-10T04:00:47.000000000Z' };
    expect(entryKeyOf({ metadata: { id: KSUID } })).toEqual({ ...byKsuid, createdAtText: null });
    expect(entryKeyOf({ metadata: { id: KSUID, createdAt: '' } })).toEqual({
      ...byKsuid,
      createdAtText: null,
    });
    expect(entryKeyOf({ metadata: { id: KSUID, createdAt: 7 } })).toEqual({
      ...byKsuid,
      createdAtText: null,
    });
    expect(entryKeyOf({ metadata: { id: KSUID, createdAt: 'noon\u0000' } })).toEqual({
      ...byKsuid,
      createdAtText: 'noon\uFFFD',
    });
  });

  it('cleans the id as the text column does', () => {
    expect(entryKeyOf({ metadata: { id: 'a\u0000b', createdAt: AT } })?.entryId).toBe('a\uFFFDb');
  });

  it('is undefined for every entry normaliseEntry rejects', () => {
    for (const raw of [
      null,
      [],
      'x',
      {},
      { metadata: null },
      { metadata: [] },
      { metadata: { createdAt: AT } },
      { metadata: { id: 5, createdAt: AT } },
      { metadata: { id: '  ', createdAt: AT } },
      { metadata: { id: 'not-a-ksuid', createdAt: 'noon' } },
    ]) {
      expect(entryKeyOf(raw)).toBeUndefined();
      expect(normaliseEntry('t', raw).ok).toBe(false);
    }
  });
});
