/**
 * The test validator of OCSF events (test/helpers/ocsf.ts) catches what it must: a missing
 * required attribute, an unknown one (top level and nested), a wrong enum value, a caption that
 * does not match its id, a wrong type, null, a profile attribute without its profile, a broken
 * object constraint, an inconsistent type_uid / category_uid / metadata.version. And the captions
 * govtrail emits are the export's.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AlertMessage } from '../../src/core/alert.js';
import {
  ANALYTIC_RULE,
  alertToDetectionFinding,
  DETECTION_FINDING,
  ENTITY_ACTIVITY,
  ENTITY_MANAGEMENT,
  entryToEntityManagement,
  FINDING_ACTIVITY,
  FINDING_STATUS_NEW,
  OBSERVABLE_USER_UID,
  OCSF_SCHEMA_VERSION,
  RESOURCE_ROLE_TARGET,
  SEVERITY_CAPTIONS,
  STATUS_SUCCESS,
} from '../../src/core/ocsf/index.js';
import { loadOcsfSchema, ocsfClassOf, validateOcsfEvent } from '../helpers/ocsf.js';

const options = { now: new Date('2026-03-01T12:00:00Z'), productVersion: '1.2.3' };

function entityEvent(): Record<string, unknown> {
  const e = entryToEntityManagement(
    {
      entry: {
        tenantId: 'acme',
        entryId: 'E1',
        createdAt: new Date('2025-01-06T09:00:00Z'),
        createdAtText: '2025-01-06T09:00:00Z',
        changeKind: 'CHANGE_KIND_PUT',
        actorKind: 'ACTOR_KIND_API',
        actorUserId: 'u1',
        syslogEventId: 's1',
        traceId: 't1',
      },
      annotations: [],
      snapshot: { enabled: true },
      previousSnapshot: { enabled: false },
      changes: [{ field: 'enabled', oldValue: false, newValue: true, direction: 'changed' }],
    },
    options,
  );
  return JSON.parse(JSON.stringify(e)) as Record<string, unknown>;
}

function findingEvent(): Record<string, unknown> {
  const alert: AlertMessage = {
    alertId: '1',
    tenantId: 'acme',
    entryId: 'E1',
    ruleId: 'AIGOV-011',
    ruleVersion: 1,
    severity: 'medium',
    title: 'Traffic switch flipped',
    summary: 'enabled false → true',
    dedupeKey: 'AIGOV-011:acme:E1',
    createdAt: '2026-02-01T00:00:00.000Z',
    context: {
      tenantId: 'acme',
      entryId: 'E1',
      changedAt: '2025-01-06T09:00:00Z',
      changeKind: 'CHANGE_KIND_PUT',
      actor: { kind: 'ACTOR_KIND_API', userId: 'u1' },
      tickets: [],
      reasons: [],
      changes: [],
      allChanges: [],
      syslogEventId: null,
      traceId: null,
      runbook: 'Check.',
      ruleName: 'traffic-switch-flipped',
      details: {},
    },
  };
  return JSON.parse(JSON.stringify(alertToDetectionFinding(alert, options))) as Record<string, unknown>;
}

/** Parsed JSON, edited in place by the mutations below. */
// biome-ignore lint/suspicious/noExplicitAny: the mutations reach into arbitrary parsed JSON.
type Loose = Record<string, any>;
type Mutation = (e: Loose) => void;

describe('validateOcsfEvent', () => {
  it('accepts the events govtrail builds', () => {
    expect(validateOcsfEvent(entityEvent())).toEqual([]);
    expect(validateOcsfEvent(findingEvent())).toEqual([]);
  });

  const broken: [string, () => Record<string, unknown>, Mutation, RegExp][] = [
    [
      'a missing required attribute',
      entityEvent,
      (e) => delete e['time'],
      /^time: required attribute is missing/,
    ],
    ['a missing entity', entityEvent, (e) => delete e['entity'], /^entity: required attribute is missing/],
    [
      'a missing nested required attribute',
      entityEvent,
      (e) => delete e['metadata'].product,
      /^metadata\.product: required/,
    ],
    [
      'a missing finding_info.uid',
      findingEvent,
      (e) => delete e['finding_info'].uid,
      /^finding_info\.uid: required/,
    ],
    [
      'a missing analytic type_id',
      findingEvent,
      (e) => delete e['finding_info'].analytic.type_id,
      /analytic\.type_id: required/,
    ],
    [
      'an unknown attribute',
      entityEvent,
      (e) => {
        e['colour'] = 'blue';
      },
      /^colour: not an attribute of entity_management/,
    ],
    [
      'an unknown nested attribute',
      entityEvent,
      (e) => {
        e['entity'].colour = 'blue';
      },
      /^entity\.colour: not an attribute of managed_entity/,
    ],
    [
      'an unknown attribute in an array item',
      findingEvent,
      (e) => {
        e['resources'][0].colour = 1;
      },
      /^resources\[0\]\.colour: not an attribute/,
    ],
    [
      'a wrong enum value',
      entityEvent,
      (e) => {
        e['severity_id'] = 7;
      },
      /^severity_id: 7 is not one of/,
    ],
    [
      'an activity the class lacks',
      findingEvent,
      (e) => {
        e['activity_id'] = 4;
        e['type_uid'] = 200404;
      },
      /^activity_id: 4 is not one of/,
    ],
    [
      'a nested wrong enum value',
      entityEvent,
      (e) => {
        e['entity'].type_id = 8;
      },
      /^entity\.type_id: 8 is not one of/,
    ],
    [
      'a caption that is not its id’s',
      entityEvent,
      (e) => {
        e['severity'] = 'Severe';
      },
      /^severity: "Severe" is not the caption of severity_id 1/,
    ],
    [
      'a wrong class_name',
      findingEvent,
      (e) => {
        e['class_name'] = 'Security Finding';
      },
      /^class_name: .* class_uid 2004/,
    ],
    [
      'a string where an integer goes',
      entityEvent,
      (e) => {
        e['time'] = '2025-01-06';
      },
      /^time: must be an integer/,
    ],
    [
      'a fraction where an integer goes',
      entityEvent,
      (e) => {
        e['status_id'] = 1.5;
      },
      /^status_id: must be a 32-bit integer/,
    ],
    [
      'a string where a boolean goes',
      findingEvent,
      (e) => {
        e['is_alert'] = 'true';
      },
      /^is_alert: must be true or false/,
    ],
    [
      'a number where a string goes',
      entityEvent,
      (e) => {
        e['metadata'].uid = 5;
      },
      /^metadata\.uid: must be a string/,
    ],
    [
      'null',
      entityEvent,
      (e) => {
        e['comment'] = null;
      },
      /^comment: null is not a value/,
    ],
    [
      'a single value where an array goes',
      entityEvent,
      (e) => {
        e['observables'] = e['observables'][0];
      },
      /^observables: must be an array/,
    ],
    [
      'an array where an object goes',
      entityEvent,
      (e) => {
        e['actor'] = [e['actor']];
      },
      /^actor: must not be an array/,
    ],
    [
      'a profile attribute without its profile',
      findingEvent,
      (e) => {
        e['actor'] = { app_name: 'x' };
      },
      /^actor: belongs to profile host/,
    ],
    [
      'a declared profile’s required attribute',
      entityEvent,
      (e) => {
        e['metadata'].profiles = ['cloud'];
      },
      /^cloud: required attribute is missing/,
    ],
    [
      'a broken at_least_one constraint',
      entityEvent,
      (e) => {
        e['actor'] = {};
      },
      /^actor: needs at least one of/,
    ],
    [
      'a key_value_object without a value',
      entityEvent,
      (e) => {
        e['metadata'].tags = [{ name: 'ticket' }];
      },
      /metadata\.tags\[0\]: needs at least one of value, values/,
    ],
    [
      'a type_uid that does not add up',
      entityEvent,
      (e) => {
        e['type_uid'] = 300401;
        e['type_name'] = 'Entity Management: Create';
      },
      /^type_uid: 300401 is not class_uid × 100 \+ activity_id \(300403\)/,
    ],
    [
      'a category that is not the class’s',
      findingEvent,
      (e) => {
        e['category_uid'] = 3;
        delete e['category_name'];
      },
      /^category_uid: 3 is not one of 2|category_uid: 3 is not the class's category 2/,
    ],
    [
      'another schema version',
      entityEvent,
      (e) => {
        e['metadata'].version = '1.1.0';
      },
      /^metadata\.version: "1\.1\.0" is not 1\.8\.0/,
    ],
    [
      'a number where a nested string goes',
      findingEvent,
      (e) => {
        e['finding_info'].analytic.uid = 7;
      },
      /analytic\.uid: must be a string/,
    ],
    [
      'an unknown class',
      entityEvent,
      (e) => {
        e['class_uid'] = 9999;
      },
      /^class_uid: 9999 is not a class/,
    ],
  ];

  it.each(broken)('catches %s', (_name, make, mutate, expected) => {
    const e = make();
    mutate(e);
    const problems = validateOcsfEvent(e);
    expect(
      problems.some((p) => expected.test(p)),
      problems.join('\n'),
    ).toBe(true);
  });

  it('does not look into free-form objects and JSON values', () => {
    const e = entityEvent();
    (e['unmapped'] as Record<string, unknown>)['anything'] = { nested: [null, 1, 'x'], colour: 'blue' };
    (e['entity'] as Record<string, unknown>)['data'] = { whatever: null, list: [1, { a: null }] };
    expect(validateOcsfEvent(e)).toEqual([]);
  });

  it('lets a sibling of 99 Other carry the source’s own value', () => {
    const e = entityEvent();
    e['activity_id'] = 99;
    e['activity_name'] = 'CHANGE_KIND_NEW_ONE';
    e['type_uid'] = 300499;
    e['type_name'] = 'Entity Management: Other';
    expect(validateOcsfEvent(e)).toEqual([]);
    e['type_name'] = 'CHANGE_KIND_NEW_ONE';
    expect(validateOcsfEvent(e)).toEqual([
      'type_name: "CHANGE_KIND_NEW_ONE" is not the caption of type_uid 300499 ("Entity Management: Other")',
    ]);
  });
});

describe('the constants govtrail emits match the 1.8.0 export', () => {
  const schema = loadOcsfSchema();
  const em = ocsfClassOf(3004);
  const df = ocsfClassOf(2004);
  const caption = (attrs: Loose | undefined, attr: string, id: number): unknown =>
    attrs?.[attr]?.enum?.[String(id)]?.caption;

  it('classes, categories and activities', () => {
    expect(schema.version).toBe(OCSF_SCHEMA_VERSION);
    expect(em?.caption).toBe(ENTITY_MANAGEMENT.className);
    expect(em?.category_uid).toBe(ENTITY_MANAGEMENT.categoryUid);
    expect(caption(em?.attributes, 'category_uid', 3)).toBe(ENTITY_MANAGEMENT.categoryName);
    expect(df?.caption).toBe(DETECTION_FINDING.className);
    expect(df?.category_uid).toBe(DETECTION_FINDING.categoryUid);
    expect(caption(df?.attributes, 'category_uid', 2)).toBe(DETECTION_FINDING.categoryName);
    for (const a of Object.values(ENTITY_ACTIVITY))
      expect(caption(em?.attributes, 'activity_id', a.id)).toBe(a.name);
    for (const a of Object.values(FINDING_ACTIVITY))
      expect(caption(df?.attributes, 'activity_id', a.id)).toBe(a.name);
  });

  it('severities, statuses and the ids of nested objects', () => {
    for (const [id, name] of Object.entries(SEVERITY_CAPTIONS)) {
      expect(caption(em?.attributes, 'severity_id', Number(id))).toBe(name);
      expect(caption(df?.attributes, 'severity_id', Number(id))).toBe(name);
    }
    expect(caption(em?.attributes, 'status_id', STATUS_SUCCESS.id)).toBe(STATUS_SUCCESS.name);
    expect(caption(df?.attributes, 'status_id', FINDING_STATUS_NEW.id)).toBe(FINDING_STATUS_NEW.name);
    expect(caption(schema.objects['analytic']?.attributes, 'type_id', ANALYTIC_RULE.id)).toBe(
      ANALYTIC_RULE.name,
    );
    expect(caption(schema.objects['resource_details']?.attributes, 'role_id', RESOURCE_ROLE_TARGET.id)).toBe(
      RESOURCE_ROLE_TARGET.name,
    );
    expect(caption(schema.objects['observable']?.attributes, 'type_id', OBSERVABLE_USER_UID.id)).toBe(
      OBSERVABLE_USER_UID.name,
    );
    expect(caption(schema.objects['managed_entity']?.attributes, 'type_id', 99)).toBe('Other');
  });

  // Given the full export (OCSF_SCHEMA_EXPORT=path/to/schema-1.8.0-export.json), the fixture is checked to
  // be its subset. The export is not in the repository (test/fixtures/ocsf/README.md says where it comes from).
  const full = process.env['OCSF_SCHEMA_EXPORT'] ?? '';
  it.skipIf(full === '' || !existsSync(full))(
    'the fixture agrees with the full export (skipped unless OCSF_SCHEMA_EXPORT names it)',
    () => {
      const exp = JSON.parse(readFileSync(full, 'utf8')) as {
        version: string;
        classes: Record<string, { attributes: Record<string, { requirement?: string; enum?: object }> }>;
        objects: Record<string, { attributes: Record<string, { requirement?: string; enum?: object }> }>;
      };
      expect(exp.version).toBe(schema.version);
      const same = (a: Loose, b: Loose) => {
        expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
        for (const [k, v] of Object.entries(a)) {
          expect(v.requirement, k).toBe(b[k]?.requirement);
          expect(Object.keys(v.enum ?? {}), k).toEqual(Object.keys(b[k]?.enum ?? {}));
        }
      };
      for (const [name, c] of Object.entries(schema.classes))
        same(c.attributes, exp.classes[name]?.attributes ?? {});
      for (const [name, o] of Object.entries(schema.objects))
        same(o.attributes, exp.objects[name]?.attributes ?? {});
    },
  );
});
