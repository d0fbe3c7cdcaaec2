/**
 * entryKeyOf is the cheap key a run looks stored entries up by before it normalises anything: it
 * must give exactly the id and time normaliseEntry gives, and refuse exactly what it rejects.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { entryKeyOf, normaliseEntry } from '../../src/core/normalise/entry.js';

const anyJson = fc.jsonValue({ maxDepth: 2 });
const id = fc.oneof(
  fc.stringMatching(/^[0-9A-Za-z]{27}$/),
  fc.constantFrom('', '   ', 'a\u0000b', '\ud800x', 'not-a-ksuid', '2sWLaGbqRFibdeTZEGNBj40O0J\u0000'),
  fc.string(),
  anyJson,
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
  anyJson,
);
const metadata = fc.oneof(
  { weight: 8, arbitrary: fc.record({ id, createdAt }) },
  { weight: 1, arbitrary: fc.record({ id }) },
  { weight: 1, arbitrary: anyJson },
);
const entry = fc.oneof({ weight: 9, arbitrary: fc.record({ metadata }) }, { weight: 1, arbitrary: anyJson });

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
