/**
 * The stop rule, the lookback bound, position order and stored keys (docs/design/sync.md steps 3 and 6).
 * Pure functions: no database, no sandbox.
 */
import { describe, expect, it } from 'vitest';
import {
  comparePositions,
  type KeyedPosition,
  lookbackBound,
  pageReachesCheckpoint,
  storedKey,
} from '../../src/core/stop-rule.js';

const C: KeyedPosition = {
  createdAtKey: '2025-03-04T10:15:00.123456789Z',
  entryId: '2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
};
const FIFTEEN_MINUTES = 15 * 60_000;

function entry(createdAt: unknown, id: unknown = 'zzzzzzzzzzzzzzzzzzzzzzzzzzz'): unknown {
  return { metadata: { id, createdAt } };
}

describe('lookbackBound', () => {
  it('is the checkpoint time minus the lookback, keeping the nanosecond digits', () => {
    expect(lookbackBound(C, FIFTEEN_MINUTES)).toBe('2025-03-04T10:00:00.123456789Z');
    expect(lookbackBound(C, 1)).toBe('2025-03-04T10:15:00.122456789Z');
  });

  it('is the checkpoint time itself with a zero lookback', () => {
    expect(lookbackBound(C, 0)).toBe(C.createdAtKey);
  });

  it('treats a negative lookback as zero rather than looking into the future', () => {
    expect(lookbackBound(C, -60_000)).toBe(C.createdAtKey);
  });
});

describe('pageReachesCheckpoint with a lookback', () => {
  it('stops at a page holding an entry older than checkpoint − lookback', () => {
    const page = [entry('2025-03-04T10:20:00Z'), entry('2025-03-04T09:59:59.999Z')];
    expect(pageReachesCheckpoint(page, C, FIFTEEN_MINUTES)).toBe(true);
  });

  it('keeps paging while every entry is inside the lookback window, the checkpoint itself included', () => {
    const page = [
      entry('2025-03-04T10:20:00Z'),
      entry(C.createdAtKey, C.entryId),
      entry('2025-03-04T10:00:00.123456790Z'),
    ];
    expect(pageReachesCheckpoint(page, C, FIFTEEN_MINUTES)).toBe(false);
  });

  it('does not stop at an entry exactly at the bound: only an older one stops the run', () => {
    expect(pageReachesCheckpoint([entry('2025-03-04T10:00:00.123456789Z')], C, FIFTEEN_MINUTES)).toBe(false);
    expect(pageReachesCheckpoint([entry('2025-03-04T10:00:00.123456788Z')], C, FIFTEEN_MINUTES)).toBe(true);
  });

  it('compares at nanosecond precision, in any time zone offset', () => {
    // 11:00:00.123456788+01:00 is 10:00:00.123456788Z: one nanosecond before the bound.
    expect(pageReachesCheckpoint([entry('2025-03-04T11:00:00.123456788+01:00')], C, FIFTEEN_MINUTES)).toBe(
      true,
    );
    expect(pageReachesCheckpoint([entry('2025-03-04T11:00:00.123456789+01:00')], C, FIFTEEN_MINUTES)).toBe(
      false,
    );
  });

  it('ignores the entry id: an old entry stops the run whatever its id', () => {
    expect(pageReachesCheckpoint([entry('2025-03-04T09:00:00Z', 'zzz')], C, FIFTEEN_MINUTES)).toBe(true);
    expect(pageReachesCheckpoint([entry('2025-03-04T10:00:00.123456789Z', '')], C, FIFTEEN_MINUTES)).toBe(
      false,
    );
  });

  it('stops on an old entry wherever it sits on the page', () => {
    const old = entry('2025-03-04T09:00:00Z');
    const recent = entry('2025-03-04T10:30:00Z');
    expect(pageReachesCheckpoint([old, recent, recent], C, FIFTEEN_MINUTES)).toBe(true);
    expect(pageReachesCheckpoint([recent, recent, old], C, FIFTEEN_MINUTES)).toBe(true);
  });
});

describe('pageReachesCheckpoint with a zero lookback', () => {
  it('stops at the first entry at or before the checkpoint by (created_at, entry_id)', () => {
    expect(pageReachesCheckpoint([entry(C.createdAtKey, C.entryId)], C, 0)).toBe(true);
    expect(pageReachesCheckpoint([entry(C.createdAtKey, '2vYJmWBbS0sLCn3sYc6l1jOQ2bW')], C, 0)).toBe(true);
    expect(pageReachesCheckpoint([entry('2025-03-04T10:15:00.123456788Z')], C, 0)).toBe(true);
  });

  it('keeps paging past entries newer than the checkpoint', () => {
    // Same instant, later id: after C in (created_at, entry_id) order.
    expect(pageReachesCheckpoint([entry(C.createdAtKey, '2vYJmWBbS0sLCn3sYc6l1jOQ2bY')], C, 0)).toBe(false);
    expect(pageReachesCheckpoint([entry('2025-03-04T10:15:00.12345679Z', '0')], C, 0)).toBe(false);
  });

  it('orders ids byte-wise, as COLLATE "C" does (upper case before lower case)', () => {
    const upper = { ...C, entryId: '2vYJmWBbS0sLCn3sYc6l1jOQ2bZ' };
    expect(pageReachesCheckpoint([entry(C.createdAtKey, '2vYJmWBbS0sLCn3sYc6l1jOQ2ba')], upper, 0)).toBe(
      false,
    );
  });

  it('takes an entry at the checkpoint time without a string id as before the checkpoint', () => {
    expect(pageReachesCheckpoint([entry(C.createdAtKey, null)], C, 0)).toBe(true);
    expect(pageReachesCheckpoint([entry(C.createdAtKey, 42)], C, 0)).toBe(true);
  });
});

describe('pageReachesCheckpoint on odd entries (tolerant, S6)', () => {
  it('never stops on an entry without a readable createdAt, and never throws on one', () => {
    const odd = [
      null,
      undefined,
      'text',
      42,
      [],
      {},
      { metadata: null },
      { metadata: {} },
      { metadata: { createdAt: null } },
      { metadata: { createdAt: '' } },
      { metadata: { createdAt: 'yesterday' } },
      { metadata: { createdAt: 1_700_000_000 } },
    ];
    expect(pageReachesCheckpoint(odd, C, FIFTEEN_MINUTES)).toBe(false);
    expect(pageReachesCheckpoint(odd, C, 0)).toBe(false);
  });

  it('still stops on a readable old entry that follows unreadable ones', () => {
    const page = [null, { metadata: { createdAt: 'yesterday' } }, entry('2025-03-04T09:00:00Z')];
    expect(pageReachesCheckpoint(page, C, FIFTEEN_MINUTES)).toBe(true);
    expect(pageReachesCheckpoint(page, C, 0)).toBe(true);
  });

  it('does not stop on an empty page', () => {
    expect(pageReachesCheckpoint([], C, FIFTEEN_MINUTES)).toBe(false);
    expect(pageReachesCheckpoint([], C, 0)).toBe(false);
  });
});

describe('comparePositions', () => {
  const at = (createdAtKey: string, entryId: string): KeyedPosition => ({ createdAtKey, entryId });

  it('orders by created_at first, whatever the ids', () => {
    expect(
      comparePositions(at('2025-01-01T00:00:00.000000001Z', 'z'), at('2025-01-01T00:00:00.000000002Z', 'a')),
    ).toBe(-1);
    expect(
      comparePositions(at('2025-01-01T00:00:00.000000002Z', 'a'), at('2025-01-01T00:00:00.000000001Z', 'z')),
    ).toBe(1);
  });

  it('breaks a created_at tie by entry id, byte-wise', () => {
    const t = '2025-01-01T00:00:00.000000000Z';
    expect(comparePositions(at(t, 'A'), at(t, 'B'))).toBe(-1);
    expect(comparePositions(at(t, 'B'), at(t, 'A'))).toBe(1);
    expect(comparePositions(at(t, 'Z'), at(t, 'a'))).toBe(-1);
    expect(comparePositions(at(t, 'a'), at(t, 'Z'))).toBe(1);
  });

  it('is zero only for the same position', () => {
    const t = '2025-01-01T00:00:00.000000000Z';
    expect(comparePositions(at(t, 'A'), at(t, 'A'))).toBe(0);
  });

  it('sorts a list into (created_at, entry_id) order', () => {
    const list = [
      at('2025-01-02T00:00:00.000000000Z', 'a'),
      at('2025-01-01T00:00:00.000000000Z', 'b'),
      at('2025-01-01T00:00:00.000000000Z', 'B'),
      at('2025-01-01T00:00:00.000000000Z', 'a'),
    ];
    expect([...list].sort(comparePositions).map((p) => `${p.createdAtKey.slice(8, 10)}${p.entryId}`)).toEqual(
      ['01B', '01a', '01b', '02a'],
    );
  });
});

describe('storedKey', () => {
  it('reads the verbatim createdAt text, nanoseconds and offset included', () => {
    expect(
      storedKey({
        createdAt: new Date('2025-03-04T10:11:12.123Z'),
        createdAtText: '2025-03-04T10:11:12.123456789Z',
      }),
    ).toBe('2025-03-04T10:11:12.123456789Z');
    expect(
      storedKey({
        createdAt: new Date('2025-03-04T10:11:12.123Z'),
        createdAtText: '2025-03-04T12:11:12.1234+02:00',
      }),
    ).toBe('2025-03-04T10:11:12.123400000Z');
  });

  it('falls back on the stored timestamp, padded to nine digits, when there is no text', () => {
    expect(storedKey({ createdAt: new Date('2025-03-04T10:11:12.123Z'), createdAtText: null })).toBe(
      '2025-03-04T10:11:12.123000000Z',
    );
  });

  it('falls back on the stored timestamp when the text is not RFC 3339', () => {
    expect(storedKey({ createdAt: new Date('2017-10-10T04:46:20Z'), createdAtText: 'last tuesday' })).toBe(
      '2017-10-10T04:46:20.000000000Z',
    );
  });
});
