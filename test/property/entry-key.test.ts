/**
 * entryKeyOf is the cheap key a run looks stored entries up by before it normalises anything: it
 * must give exactly the id and time normaliseEntry gives, and refuse exactly what it rejects.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entryKeyOf, normaliseEntry } from '../../src/normalise/entry.js';

const anyJson = fc.jsonValue({ maxDepth: 2 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof(a, anyJson, fc.constant(null), fc.constant(undefined));
const id = fc.oneof(
  fc.stringMatching(/^[0-9A-Za-z]{27}$/),
  fc.constantFrom('', '   ', 'a\u0000b', '\ud800x', 'not-a-ksuid'),
  fc.string(),
);
const createdAt = fc.oneof(
  fc
    .date({
      min: new Date('1960-01-01T00:00:00Z'),
      max: new Date('2100-01-01T00:00:00Z'),
      noInvalidDate: true,
    })
    .map((d) => d.toISOString()),
  fc.constantFrom(
    '2025-01-06T09:00:00.123456789Z',
    '2025-01-06T09:00:00+02:00',
    ' 2025-01-06T09:00:00Z',
    'soon',
    '',
  ),
);
const entry = fc.oneof(
  fc.record({
    metadata: maybe(fc.record({ id: maybe(id), createdAt: maybe(createdAt) }, { requiredKeys: [] })),
  }),
  anyJson,
);

describe('entryKeyOf', () => {
  it('agrees with normaliseEntry on the id, the time and what cannot be keyed', () => {
    fc.assert(
      fc.property(entry, (raw) => {
        const key = entryKeyOf(raw);
        const n = normaliseEntry('t', raw);
        if (!n.ok) expect(key).toBeUndefined();
        else
          expect(key).toEqual({
            entryId: n.value.entry.entryId,
            createdAtKey: n.value.entry.createdAtKey,
            createdAtText: n.value.entry.createdAtText,
          });
      }),
      { numRuns: 2000 },
    );
  });
});
