/**
 * The normaliser's building blocks: RFC 3339 timestamps, proto3 durations, KSUIDs and the
 * table of settings_snapshot columns (docs/design/data-model.md).
 */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/core/normalise/duration.js';
import {
  MAPPED_LIFECYCLE_KEYS,
  MAPPED_TOP_LEVEL_KEYS,
  readWireField,
  SNAPSHOT_FIELDS,
} from '../../src/core/normalise/fields.js';
import { isKsuid, ksuidTime } from '../../src/core/normalise/ksuid.js';
import { dateKey, parseTimestamp, subtractMs } from '../../src/core/normalise/time.js';

describe('parseTimestamp', () => {
  it('reads UTC times, before and after 1970, into a nine-digit key and a millisecond Date', () => {
    expect(parseTimestamp('2025-03-04T10:11:12.123456789Z')).toEqual({
      key: '2025-03-04T10:11:12.123456789Z',
      date: new Date('2025-03-04T10:11:12.123Z'),
    });
    expect(parseTimestamp('1969-12-31T23:59:59.5Z')).toEqual({
      key: '1969-12-31T23:59:59.500000000Z',
      date: new Date('1969-12-31T23:59:59.500Z'),
    });
    expect(parseTimestamp('2025-01-01T00:00:00.0001Z')).toEqual({
      key: '2025-01-01T00:00:00.000100000Z',
      date: new Date('2025-01-01T00:00:00.000Z'),
    });
  });

  // Each calendar edge in the common UTC form (read without the regular expression) and in an
  // offset form (read by the general path): both must agree on what is a date.
  it.each([
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000000000Z'],
    ['2000-02-29T12:00:00Z', '2000-02-29T12:00:00.000000000Z'],
    ['2025-12-31T23:59:59.999Z', '2025-12-31T23:59:59.999000000Z'],
    ['2025-01-31T00:00:00Z', '2025-01-31T00:00:00.000000000Z'],
    ['2025-04-30T00:00:00Z', '2025-04-30T00:00:00.000000000Z'],
    ['0048-02-29T00:00:00Z', '0048-02-29T00:00:00.000000000Z'],
    ['0050-12-31T23:59:59Z', '0050-12-31T23:59:59.000000000Z'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000000000Z'],
    ['9999-12-31T23:59:59.999999999Z', '9999-12-31T23:59:59.999999999Z'],
  ])('takes the real date %s', (text, key) => {
    expect(parseTimestamp(text)?.key).toBe(key);
    expect(parseTimestamp(text.replace(/Z$/, '+00:00'))?.key).toBe(key);
    expect(parseTimestamp(text)?.date.getTime()).toBe(
      parseTimestamp(text.replace(/Z$/, '+00:00'))?.date.getTime(),
    );
  });

  it.each([
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2025-02-30T00:00:00Z',
    '2025-04-31T00:00:00Z',
    '2025-06-31T00:00:00Z',
    '2025-13-01T00:00:00Z',
    '2025-00-10T00:00:00Z',
    '2025-01-00T00:00:00Z',
    '2025-01-32T00:00:00Z',
    '2025-01-01T24:00:00Z',
    '2025-01-01T00:60:00Z',
    '2025-01-01T00:00:60Z',
    '0049-02-29T00:00:00Z',
    '0050-02-30T00:00:00Z',
    '0050-04-31T00:00:00Z',
    '0050-13-01T00:00:00Z',
    '2025-01-01T00:00:0aZ',
    '2025-01-01T00:00:00.Z',
    '2025-01-01T00:00:00.1234567890Z',
  ])('refuses %s, which is no date', (text) => {
    expect(parseTimestamp(text)).toBeUndefined();
    expect(parseTimestamp(text.replace(/Z$/, '+00:00'))).toBeUndefined();
  });

  it('converts a positive or negative offset, hours and minutes, to UTC', () => {
    expect(parseTimestamp('2025-01-01T00:00:00-05:30')).toEqual({
      key: '2025-01-01T05:30:00.000000000Z',
      date: new Date('2025-01-01T05:30:00Z'),
    });
    expect(parseTimestamp('2025-01-01T00:00:00.25+05:30')).toEqual({
      key: '2024-12-31T18:30:00.250000000Z',
      date: new Date('2024-12-31T18:30:00.250Z'),
    });
  });

  it('accepts the lower-case t and z and the space separator RFC 3339 allows, and surrounding blanks', () => {
    const key = '2025-01-01T00:00:00.000000000Z';
    expect(parseTimestamp('2025-01-01t00:00:00z')?.key).toBe(key);
    expect(parseTimestamp('2025-01-01 00:00:00Z')?.key).toBe(key);
    expect(parseTimestamp(' 2025-01-01T00:00:00Z\n')?.key).toBe(key);
  });

  it('refuses text before or after the timestamp', () => {
    for (const t of [
      'x2025-01-01T00:00:00Z',
      '2025-01-01T00:00:00Zx',
      '2025-01-01T00:00:00+01:00x',
      'at 2025-01-01T00:00:00+01:00',
    ]) {
      expect(parseTimestamp(t), t).toBeUndefined();
    }
  });

  it('refuses impossible dates and times instead of rolling them over, in UTC and with an offset', () => {
    for (const zone of ['Z', '+00:00', '-02:00']) {
      for (const base of ['2025', '1960']) {
        expect(parseTimestamp(`${base}-01-01T25:00:00${zone}`), `hour 25 ${base} ${zone}`).toBeUndefined();
        expect(parseTimestamp(`${base}-13-01T00:00:00${zone}`), `month 13 ${base} ${zone}`).toBeUndefined();
        expect(parseTimestamp(`${base}-01-01T00:00:60${zone}`), `second 60 ${base} ${zone}`).toBeUndefined();
        // Minutes 60–99 and hour 24 would roll into the next hour / day with the same date.
        expect(parseTimestamp(`${base}-01-01T10:60:00${zone}`), `minute 60 ${base} ${zone}`).toBeUndefined();
        expect(parseTimestamp(`${base}-01-01T10:99:00${zone}`), `minute 99 ${base} ${zone}`).toBeUndefined();
        expect(parseTimestamp(`${base}-01-01T24:00:00${zone}`), `hour 24 ${base} ${zone}`).toBeUndefined();
        expect(
          parseTimestamp(`${base}-02-30T00:00:00${zone}`),
          `30 February ${base} ${zone}`,
        ).toBeUndefined();
      }
    }
  });

  it('refuses an offset beyond ±23:59', () => {
    expect(parseTimestamp('2025-01-01T00:00:00+24:00')).toBeUndefined();
    expect(parseTimestamp('2025-01-01T00:00:00-05:60')).toBeUndefined();
    expect(parseTimestamp('2025-01-01T00:00:00+23:59')?.key).toBe('2024-12-31T00:01:00.000000000Z');
  });

  it('keeps years 0000–0099 as themselves, and refuses an offset that leaves years 0000–9999', () => {
    expect(parseTimestamp('0050-06-01T12:00:00.5Z')).toEqual({
      key: '0050-06-01T12:00:00.500000000Z',
      date: new Date('0050-06-01T12:00:00.500Z'),
    });
    expect(parseTimestamp('0001-01-01T00:30:00+01:00')?.key).toBe('0000-12-31T23:30:00.000000000Z');
    expect(parseTimestamp('0000-01-01T00:30:00+01:00')).toBeUndefined();
    expect(parseTimestamp('9999-12-31T23:30:00-01:00')).toBeUndefined();
  });

  it('refuses what is not a string', () => {
    for (const v of [undefined, null, 0, 1_700_000_000_000, new Date(0), {}])
      expect(parseTimestamp(v)).toBeUndefined();
  });
});

describe('dateKey and subtractMs', () => {
  it('pads a Date to nine fractional digits', () => {
    expect(dateKey(new Date('2025-01-01T00:00:00.123Z'))).toBe('2025-01-01T00:00:00.123000000Z');
  });

  it('subtracts across a day boundary and keeps the sub-millisecond digits', () => {
    expect(subtractMs('2025-01-01T00:00:00.000000001Z', 1)).toBe('2024-12-31T23:59:59.999000001Z');
  });
});

describe('parseDuration', () => {
  it('writes the interval literal without leading zeros', () => {
    expect(parseDuration('007s')).toEqual({ seconds: 7, interval: '7 seconds' });
    expect(parseDuration('00s')).toEqual({ seconds: 0, interval: '0 seconds' });
    expect(parseDuration('-0012.50s')).toEqual({ seconds: -12.5, interval: '-12.5 seconds' });
  });

  it('refuses text before or after the duration', () => {
    for (const text of ['5sx', '5s5', '1.5ss', '60s ago', 'x5s', 'in 5s', '--5s', '+5s']) {
      expect(parseDuration(text), text).toBeUndefined();
    }
  });

  it('keeps a whole number of seconds exact, however large', () => {
    expect(parseDuration('315576000000s')?.interval).toBe('315576000000 seconds');
    expect(parseDuration('10s')?.interval).toBe('10 seconds');
  });
});

describe('ksuidTime', () => {
  it("decodes the timestamp of the reference implementation's example KSUID", () => {
    // github.com/segmentio/ksuid README: 0ujtsYcgvSTl8PAuAdqWYSMnLOv is 2017-10-09 21:00:47 -0700 PDT.
    expect(ksuidTime('0ujtsYcgvSTl8PAuAdqWYSMnLOv')).toEqual(new Date('2017-10-10T04:00:47Z'));
  });

  it('spans the KSUID epoch (2014-05-13T16:53:20Z) to the largest KSUID', () => {
    expect(ksuidTime('000000000000000000000000000')).toEqual(new Date('2014-05-13T16:53:20Z'));
    expect(ksuidTime('aWgEPTl1tmebfsQzFP4bxwgy80V')).toEqual(new Date('2150-06-19T23:21:35Z'));
  });

  it('refuses base62 text above the largest KSUID (more than 20 bytes)', () => {
    expect(ksuidTime('aWgEPTl1tmebfsQzFP4bxwgy80W')).toBeUndefined();
    expect(ksuidTime('zzzzzzzzzzzzzzzzzzzzzzzzzzz')).toBeUndefined();
  });

  it('refuses text that is not 27 base62 characters, whole', () => {
    for (const id of [
      '',
      '0ujtsYcgvSTl8PAuAdqWYSMnLO',
      '0ujtsYcgvSTl8PAuAdqWYSMnLOv0',
      '-0ujtsYcgvSTl8PAuAdqWYSMnLOv',
      '0ujtsYcgvSTl8PAuAdqWYSMnLOv-',
      '0ujtsYcgvSTl8PAuAdqWYSM-LOv',
      'not-a-ksuid',
      '0'.repeat(28),
      '0'.repeat(26),
    ]) {
      expect(ksuidTime(id), id).toBeUndefined();
    }
  });

  it('isKsuid says whether the text has the shape of a KSUID', () => {
    expect(isKsuid('0ujtsYcgvSTl8PAuAdqWYSMnLOv')).toBe(true);
    expect(isKsuid('0ujtsYcgvSTl8PAuAdqWYSM-LOv')).toBe(false);
    expect(isKsuid('zzzzzzzzzzzzzzzzzzzzzzzzzzz')).toBe(false);
  });
});

describe('SNAPSHOT_FIELDS: the settings_snapshot columns of docs/design/data-model.md', () => {
  it('maps each column to its wire path and kind; only the two timestamps are not diffed', () => {
    expect(SNAPSHOT_FIELDS.map((f) => [f.column, f.path.join('.'), f.kind, f.diffed])).toEqual([
      ['allowed_client_types', 'allowedClientTypes', 'enumList', true],
      ['audit_verbosity', 'auditVerbosity', 'enum', true],
      ['auto_discovery_enabled', 'autoDiscoveryEnabled', 'boolean', true],
      ['default_tool_classification', 'defaultToolClassification', 'enum', true],
      ['discovery_interval', 'discoveryInterval', 'duration', true],
      ['inactivity_close_after', 'defaultClientLifecycle.inactivityCloseAfter', 'duration', true],
      ['inactivity_hide_after', 'defaultClientLifecycle.inactivityHideAfter', 'duration', true],
      ['retention_delete_after', 'defaultClientLifecycle.retentionDeleteAfter', 'duration', true],
      ['enabled', 'enabled', 'boolean', true],
      ['prefer_code_mode_over_direct_tools', 'preferCodeModeOverDirectTools', 'boolean', true],
      ['require_tool_approval', 'requireToolApproval', 'boolean', true],
      ['surface_requestable_tools', 'surfaceRequestableTools', 'boolean', true],
      ['settings_created_at', 'createdAt', 'timestamp', false],
      ['settings_updated_at', 'updatedAt', 'timestamp', false],
    ]);
  });

  it('lists the mapped top-level and lifecycle keys; everything else is an extra field', () => {
    expect([...MAPPED_TOP_LEVEL_KEYS].sort()).toEqual([
      'allowedClientTypes',
      'auditVerbosity',
      'autoDiscoveryEnabled',
      'createdAt',
      'defaultClientLifecycle',
      'defaultToolClassification',
      'discoveryInterval',
      'enabled',
      'preferCodeModeOverDirectTools',
      'requireToolApproval',
      'surfaceRequestableTools',
      'updatedAt',
    ]);
    expect([...MAPPED_LIFECYCLE_KEYS].sort()).toEqual([
      'inactivityCloseAfter',
      'inactivityHideAfter',
      'retentionDeleteAfter',
    ]);
  });
});

describe('readWireField', () => {
  const field = (column: string) => {
    const f = SNAPSHOT_FIELDS.find((x) => x.column === column);
    if (f === undefined) throw new Error(column);
    return f;
  };

  it('reads a top-level field and a lifecycle field', () => {
    const s = { enabled: true, defaultClientLifecycle: { inactivityHideAfter: '60s' } };
    expect(readWireField(s, field('enabled'))).toBe(true);
    expect(readWireField(s, field('inactivity_hide_after'))).toBe('60s');
    expect(readWireField(s, field('inactivity_close_after'))).toBeUndefined();
  });

  it('is undefined for a null or absent snapshot', () => {
    expect(readWireField(null, field('enabled'))).toBeUndefined();
    expect(readWireField(undefined, field('enabled'))).toBeUndefined();
    expect(readWireField(null, field('retention_delete_after'))).toBeUndefined();
  });

  it('is undefined under a lifecycle that is null, absent or not an object', () => {
    for (const lc of [null, undefined, '60s', ['60s'], 5]) {
      expect(readWireField({ defaultClientLifecycle: lc }, field('retention_delete_after'))).toBeUndefined();
    }
  });

  it('returns a null field as null: present-but-null is kept apart from absent', () => {
    expect(readWireField({ enabled: null }, field('enabled'))).toBeNull();
  });
});
