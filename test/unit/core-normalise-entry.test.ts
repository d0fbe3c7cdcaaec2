import { describe, expect, it } from 'vitest';
import { canonicalJson, rowHash, toJsonbText } from '../../src/core/normalise/canonical.js';
import { parseDuration } from '../../src/core/normalise/duration.js';
import { normaliseEntry } from '../../src/core/normalise/entry.js';
import { ksuidTime } from '../../src/core/normalise/ksuid.js';
import { parseTimestamp, subtractMs } from '../../src/core/normalise/time.js';

const full = {
  metadata: {
    id: '2mZ1bQ9w4T7nJ0y3Xk8aB5cD6eF',
    createdAt: '2025-03-04T10:11:12.123456789Z',
    changeKind: 'CHANGE_KIND_PUT',
    actor: { kind: 'ACTOR_KIND_API', userId: '2mYzQ3x1' },
    annotations: [
      {
        key: 'ticket_id',
        kind: 'ANNOTATION_KIND_TICKET',
        rawValue: 'SEC-1',
        displayValue: 'SEC-1',
        displayLabel: 'Ticket',
        displayUrl: 'https://jira.example/browse/SEC-1',
      },
      { key: 'reason', kind: 'ANNOTATION_KIND_REASON', rawValue: 'audit', displayUrl: '' },
    ],
    syslogEventId: '',
    traceId: '0af7651916cd43dd8448eb211c80319c',
    futureField: 1,
  },
  snapshot: {
    allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL'],
    auditVerbosity: 'AUDIT_VERBOSITY_FULL',
    requireToolApproval: true,
    discoveryInterval: '3600s',
    defaultClientLifecycle: { inactivityCloseAfter: '1.5s', retentionDeleteAfter: '0s', newKnob: 'x' },
    codeModeConcurrency: 3,
    untrustedJudgeDisable: true,
    createdAt: '2025-01-01T00:00:00Z',
  },
};

describe('normaliseEntry', () => {
  it('maps every documented field and keeps the entry verbatim', () => {
    const r = normaliseEntry('acme', full);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const { entry, annotations, snapshot } = r.value;
    expect(entry.raw).toBe(full);
    expect(entry.createdAtText).toBe('2025-03-04T10:11:12.123456789Z');
    expect(entry.createdAtKey).toBe('2025-03-04T10:11:12.123456789Z');
    expect(entry.changeKind).toBe('CHANGE_KIND_PUT');
    expect(entry.actorKind).toBe('ACTOR_KIND_API');
    expect(entry.actorUserId).toBe('2mYzQ3x1');
    expect(entry.syslogEventId).toBeNull();
    expect(entry.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(annotations).toHaveLength(2);
    expect(annotations[0]).toMatchObject({
      ordinal: 0,
      kind: 'ANNOTATION_KIND_TICKET',
      displayUrl: 'https://jira.example/browse/SEC-1',
    });
    expect(annotations[1]?.displayUrl).toBeNull();
    expect(snapshot).toMatchObject({
      allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL'],
      allowsAllClientTypes: false,
      auditVerbosity: 'AUDIT_VERBOSITY_FULL',
      requireToolApproval: true,
      autoDiscoveryEnabled: false,
      discoveryInterval: '3600 seconds',
      inactivityCloseAfter: '1.5 seconds',
      retentionDeleteAfter: '0 seconds',
      inactivityHideAfter: null,
      settingsCreatedAt: '2025-01-01T00:00:00.000000000Z',
    });
    expect(snapshot?.extraFields).toEqual({
      codeModeConcurrency: 3,
      untrustedJudgeDisable: true,
      'defaultClientLifecycle.newKnob': 'x',
    });
  });

  it('keeps an unknown snapshot field named __proto__ among the extra fields', () => {
    const snapshot = JSON.parse('{"__proto__":{"a":1},"later":2}') as Record<string, unknown>;
    const r = normaliseEntry('t', { metadata: full.metadata, snapshot });
    const extra = r.ok ? r.value.snapshot?.extraFields : undefined;
    expect(JSON.stringify(extra)).toBe('{"__proto__":{"a":1},"later":2}');
    expect(Object.getPrototypeOf(extra)).toBe(Object.prototype);
  });

  it('treats an absent or empty client type list as all types', () => {
    const absent = normaliseEntry('t', { metadata: full.metadata, snapshot: {} });
    const empty = normaliseEntry('t', { metadata: full.metadata, snapshot: { allowedClientTypes: [] } });
    expect(absent.ok && absent.value.snapshot?.allowsAllClientTypes).toBe(true);
    expect(absent.ok && absent.value.snapshot?.allowedClientTypes).toBeNull();
    expect(empty.ok && empty.value.snapshot?.allowsAllClientTypes).toBe(true);
    expect(empty.ok && empty.value.snapshot?.allowedClientTypes).toEqual([]);
  });

  it('rejects an entry without metadata.id, with the reason', () => {
    for (const raw of [{}, { metadata: null }, { metadata: { id: '' } }, null, 'x', [1]]) {
      const r = normaliseEntry('t', raw);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(/metadata|not an object/);
    }
  });

  it('keeps unknown enum values and odd types as received, with warnings instead of errors', () => {
    const r = normaliseEntry('t', {
      metadata: {
        id: 'x1',
        createdAt: '2025-01-01T00:00:00Z',
        changeKind: 'CHANGE_KIND_TELEPORT',
        actor: 'nobody',
        annotations: Array.from({ length: 18 }, (_, i) => ({
          key: i === 0 ? 'Bad Key' : `k${i}`,
          kind: 'ANNOTATION_KIND_NEW',
        })),
      },
      snapshot: { auditVerbosity: 7, requireToolApproval: 'yes', discoveryInterval: 'soon', list: null },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.entry.changeKind).toBe('CHANGE_KIND_TELEPORT');
    expect(r.value.annotations).toHaveLength(18);
    expect(r.value.snapshot?.auditVerbosity).toBe('7');
    expect(r.value.snapshot?.requireToolApproval).toBeNull();
    expect(r.value.snapshot?.discoveryInterval).toBeNull();
    expect(r.value.warnings.join('\n')).toMatch(/more than the documented 16/);
    expect(r.value.warnings.join('\n')).toMatch(/outside the documented pattern/);
  });

  it('dates an entry by its KSUID when createdAt is missing', () => {
    const id = '0ujtsYcgvSTl8PAuAdqWYSMnLOv'; // KSUID of 2017-10-10T04:46:20Z in the reference implementation
    const r = normaliseEntry('t', { metadata: { id } });
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value.entry.createdAtText).toBeNull();
      expect(r.value.entry.createdAt.toISOString()).toBe(ksuidTime(id)?.toISOString());
    }
  });

  it('replaces NUL and lone surrogates in text columns, which PostgreSQL cannot store', () => {
    const r = normaliseEntry('t', {
      metadata: { id: 'a\u0000b', createdAt: '2025-01-01T00:00:00Z', traceId: '\ud800' },
    });
    expect(r.ok && r.value.entry.entryId).toBe('a\uFFFDb');
    expect(r.ok && r.value.entry.traceId).toBe('\uFFFD');
  });
});

describe('durations', () => {
  it.each([
    ['3600s', 3600, '3600 seconds'],
    ['1.5s', 1.5, '1.5 seconds'],
    ['0s', 0, '0 seconds'],
    ['0.000000001s', 1e-9, '0 seconds'],
    ['-2.25s', -2.25, '-2.25 seconds'],
  ])('parses %s', (text, seconds, interval) => {
    expect(parseDuration(text)).toEqual({ seconds, interval });
  });
  it.each(['', '1h', '3600', 's', '1.s', null, 5])('refuses %s', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('timestamps', () => {
  it('keeps nanoseconds in a sortable UTC key', () => {
    expect(parseTimestamp('2025-03-04T12:11:12.1+02:00')?.key).toBe('2025-03-04T10:11:12.100000000Z');
    expect(parseTimestamp('2025-03-04T10:11:12Z')?.key).toBe('2025-03-04T10:11:12.000000000Z');
    expect(parseTimestamp('2025-02-30T00:00:00Z')).toBeUndefined();
    expect(subtractMs('2025-03-04T10:11:12.123456789Z', 15 * 60_000)).toBe('2025-03-04T09:56:12.123456789Z');
  });
});

describe('canonical JSON and jsonb text', () => {
  it('sorts keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}',
    );
  });
  it('escapes what jsonb refuses but leaves literal backslashes alone', () => {
    expect(toJsonbText({ a: 'x\u0000y', b: '\\u0000', c: '\udc00' })).toBe(
      '{"a":"x\\ufffdy","b":"\\\\u0000","c":"\\ufffd"}',
    );
  });
  it('chains row hashes from the previous hash', () => {
    const row = { tenantId: 't', entryId: 'e', createdAtText: null, raw: { a: 1 } };
    const h1 = rowHash(null, row);
    expect(rowHash(null, row).equals(h1)).toBe(true);
    expect(rowHash(h1, row).equals(h1)).toBe(false);
  });
});

describe('normaliseEntry: times repeated from entry to entry', () => {
  const snap = (id: string, createdAt: string, settings: Record<string, unknown>) => {
    const n = normaliseEntry('acme', { metadata: { id, createdAt }, snapshot: settings });
    if (!n.ok) throw new Error(n.reason);
    return n.value;
  };

  it('gives each text its own key, whichever texts came before', () => {
    const texts = [
      '2025-03-04T10:11:12Z',
      '2025-03-04T11:11:12+01:00',
      '2025-03-04T10:11:12.5Z',
      '2025-03-04T10:11:12Z',
      '2024-02-29T00:00:00.000000001Z',
    ];
    for (const [i, a] of texts.entries()) {
      for (const b of texts) {
        const v = snap(`2mZ1bQ9w4T7nJ0y3Xk8aB5cD6e${i}`, a, { createdAt: b, updatedAt: a });
        expect(v.snapshot?.settingsCreatedAt).toBe(parseTimestamp(b)?.key);
        expect(v.snapshot?.settingsUpdatedAt).toBe(v.entry.createdAtKey);
        expect(v.entry.createdAtKey).toBe(parseTimestamp(a)?.key);
      }
    }
  });

  it('warns about a text that is no time every time it comes', () => {
    for (let i = 0; i < 3; i++) {
      const v = snap('2mZ1bQ9w4T7nJ0y3Xk8aB5cD6eF', '2025-03-04T10:11:12Z', { updatedAt: 'soon' });
      expect(v.snapshot?.settingsUpdatedAt).toBeNull();
      expect(v.warnings).toEqual([
        'snapshot.updatedAt is not an RFC 3339 time ("soon"); column left NULL, raw keeps it',
      ]);
    }
  });
});
