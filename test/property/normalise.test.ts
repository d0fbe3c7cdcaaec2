/**
 * Properties of the pure normaliser: it never throws on entry-shaped JSON, keeps `raw` as
 * received, and parses every well-formed proto3 duration.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/core/normalise/duration.js';
import { normaliseEntry } from '../../src/core/normalise/entry.js';
import { parseTimestamp } from '../../src/core/normalise/time.js';

/** Anything JSON, with a bias towards the awkward. */
const anyJson = fc.jsonValue({ maxDepth: 3 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof(a, anyJson, fc.constant(null), fc.constant(undefined));
const ksuidish = fc.stringMatching(/^[0-9A-Za-z]{27}$/);
const timestamp = fc.oneof(
  fc
    .date({
      min: new Date('2000-01-01T00:00:00Z'),
      max: new Date('2100-01-01T00:00:00Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString()),
  fc.constantFrom(
    '2025-01-06T09:00:00.123456789Z',
    '2025-01-06T09:00:00+02:00',
    'yesterday',
    '',
    '0000-00-00T00:00:00Z',
  ),
);

const annotation = fc.record(
  {
    key: maybe(fc.oneof(fc.constantFrom('ticket', 'reason', 'a.b-c_d'), fc.string())),
    kind: maybe(fc.constantFrom('ANNOTATION_KIND_TICKET', 'ANNOTATION_KIND_UNKNOWN_42', '')),
    rawValue: maybe(fc.string({ maxLength: 600 })),
    display: maybe(
      fc.record({ value: maybe(fc.string()), label: maybe(fc.string()), url: maybe(fc.webUrl()) }),
    ),
  },
  { requiredKeys: [] },
);

const snapshot = fc.record(
  {
    allowedClientTypes: maybe(fc.array(fc.oneof(fc.string(), anyJson), { maxLength: 4 })),
    auditVerbosity: maybe(fc.constantFrom('AUDIT_VERBOSITY_FULL', 'AUDIT_VERBOSITY_NEW_ONE')),
    autoDiscoveryEnabled: maybe(fc.boolean()),
    discoveryInterval: maybe(fc.constantFrom('3600s', '1.5s', '-2s', 'soon', '')),
    defaultClientLifecycle: maybe(
      fc.record({
        inactivityCloseAfter: maybe(fc.string()),
        retentionDeleteAfter: maybe(fc.constant('86400s')),
      }),
    ),
    enabled: maybe(fc.boolean()),
    createdAt: maybe(timestamp),
    unknownField: anyJson,
  },
  { requiredKeys: [] },
);

const entry = fc.record(
  {
    metadata: maybe(
      fc.record(
        {
          id: maybe(fc.oneof(ksuidish, fc.string())),
          createdAt: maybe(timestamp),
          changeKind: maybe(
            fc.constantFrom('CHANGE_KIND_PUT', 'CHANGE_KIND_HARD_DELETE', 'CHANGE_KIND_FUTURE'),
          ),
          actor: maybe(
            fc.record({ kind: maybe(fc.string()), userId: maybe(fc.string()) }, { requiredKeys: [] }),
          ),
          annotations: maybe(fc.array(maybe(annotation), { maxLength: 20 })),
          syslogEventId: maybe(fc.string()),
          traceId: maybe(fc.string()),
        },
        { requiredKeys: [] },
      ),
    ),
    snapshot: maybe(snapshot),
    extra: anyJson,
  },
  { requiredKeys: [] },
);

describe('normaliseEntry: properties', () => {
  it('never throws, and keeps raw as received (same reference, unchanged)', () => {
    fc.assert(
      fc.property(fc.oneof(entry, anyJson), fc.string(), (raw, tenant) => {
        const before = JSON.stringify(raw);
        const r = normaliseEntry(tenant === '' ? 'acme' : tenant, raw);
        expect(JSON.stringify(raw)).toBe(before);
        if (r.ok) {
          expect(r.value.entry.raw).toBe(raw);
          expect(r.value.entry.createdAtKey).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
          for (const a of r.value.annotations) expect(a.entryId).toBe(r.value.entry.entryId);
        } else {
          expect(r.raw).toBe(raw);
          expect(typeof r.reason).toBe('string');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts every entry that has a string metadata.id and a valid createdAt', () => {
    fc.assert(
      fc.property(
        entry,
        ksuidish,
        timestamp.filter((t) => !Number.isNaN(Date.parse(t))),
        (raw, id, createdAt) => {
          const e = {
            ...raw,
            metadata: { ...(typeof raw.metadata === 'object' ? raw.metadata : {}), id, createdAt },
          };
          const r = normaliseEntry('acme', e);
          expect(r.ok).toBe(true);
          if (r.ok) expect(r.value.entry.entryId).toBe(id);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('parseDuration: properties', () => {
  it('round-trips <n>[.<frac>]s: seconds and a microsecond-exact interval literal', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
        fc.constantFrom('', ' ', '\t'),
        (negative, whole, frac, pad) => {
          const text = `${negative ? '-' : ''}${whole}${frac === undefined ? '' : `.${frac}`}s`;
          const d = parseDuration(`${pad}${text}${pad}`);
          expect(d).toBeDefined();
          if (d === undefined) return;
          expect(d.seconds).toBe(Number(text.slice(0, -1)));
          // The literal keeps the first six fractional digits, without trailing zeros.
          const micro = (frac ?? '').slice(0, 6).replace(/0+$/, '');
          expect(d.interval).toBe(`${negative ? '-' : ''}${whole}${micro === '' ? '' : `.${micro}`} seconds`);
          // Parsing the literal's number again gives the same literal.
          expect(parseDuration(`${d.interval.replace(' seconds', '')}s`)?.interval).toBe(d.interval);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses what is not <n>[.<frac>]s', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        fc.pre(!/^\s*-?\d+(\.\d{1,9})?s\s*$/.test(s));
        expect(parseDuration(s)).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseTimestamp: properties', () => {
  it('reads a UTC time the same with Z as with +00:00, and keys sort as instants', () => {
    const utc = fc
      .tuple(
        fc.date({
          min: new Date('1900-01-01T00:00:00Z'),
          max: new Date('2200-01-01T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.stringMatching(/^(\.\d{1,9})?$/),
      )
      .map(([d, frac]) => `${d.toISOString().slice(0, 19)}${frac}Z`);
    fc.assert(
      fc.property(utc, utc, (a, b) => {
        const pa = parseTimestamp(a);
        const pb = parseTimestamp(b);
        expect(pa).toEqual(parseTimestamp(a.replace(/Z$/, '+00:00')));
        expect(pa?.date.getTime()).toBe(Date.parse(a.replace(/(\.\d{3})\d+Z$/, '$1Z')));
        if (pa !== undefined && pb !== undefined && pa.date.getTime() !== pb.date.getTime())
          expect(pa.key < pb.key).toBe(pa.date.getTime() < pb.date.getTime());
      }),
      { numRuns: 2000 },
    );
  });
});
