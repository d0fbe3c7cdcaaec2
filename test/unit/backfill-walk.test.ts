import { describe, expect, it } from 'vitest';
import { loadRulePack } from '../../src/config/rule-pack.js';
import { normaliseEntry } from '../../src/core/normalise/entry.js';
import { validKeyMillis } from '../../src/core/normalise/time.js';
import type { NormalisedEntry } from '../../src/core/normalise/types.js';
import { BackfillWalk, canWalkInMemory, storedPosition } from '../../src/sync/backfill-walk.js';

const pack = loadRulePack();

function entry(id: string, createdAt: string, snapshot: object | null = { enabled: true }): NormalisedEntry {
  const n = normaliseEntry('acme', {
    metadata: { id, createdAt, changeKind: 'CHANGE_KIND_PUT' },
    ...(snapshot === null ? {} : { snapshot }),
  });
  if (!n.ok) throw new Error(n.reason);
  return n.value;
}

describe('storedPosition (PostgreSQL rounds nanoseconds to microseconds)', () => {
  it('rounds half to even like the server, and carries into the seconds', () => {
    expect(storedPosition('2025-01-01T00:00:00.000001499Z')).toBe('2025-01-01T00:00:00.000001Z');
    expect(storedPosition('2025-01-01T00:00:00.000001501Z')).toBe('2025-01-01T00:00:00.000002Z');
    expect(storedPosition('2025-01-01T00:00:00.000000500Z')).toBe('2025-01-01T00:00:00.000000Z');
    expect(storedPosition('2025-01-01T00:00:00.000001500Z')).toBe('2025-01-01T00:00:00.000002Z');
    expect(storedPosition('2025-12-31T23:59:59.999999900Z')).toBe('2026-01-01T00:00:00.000000Z');
    expect(storedPosition('2025-01-01T00:00:00Z')).toBeUndefined();
    expect(storedPosition('2025-01-01T00:00:00.000000000')).toBeUndefined();
    expect(storedPosition('2025-01-01T00:00:0x.000000000Z')).toBeUndefined();
  });

  /** storedPosition as it was before its shortcut for times to the microsecond: the reference. */
  function reference(key: string): string | undefined {
    const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{9})Z$/.exec(key);
    if (m === null) return undefined;
    const x = Number(`0.${m[2]}`) * 1_000_000;
    const micros = x - Math.trunc(x) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x);
    if (micros < 1_000_000) return `${m[1]}.${String(micros).padStart(6, '0')}Z`;
    return `${new Date(Date.parse(`${m[1]}Z`) + 1000).toISOString().slice(0, 19)}.000000Z`;
  }

  it('gives what the arithmetic gives for every microsecond, and for fractions around them', () => {
    for (let us = 0; us < 1_000_000; us++) {
      const key = `2025-12-31T23:59:59.${String(us).padStart(6, '0')}000Z`;
      if (storedPosition(key) !== reference(key)) expect(storedPosition(key)).toBe(reference(key));
    }
    for (let i = 0; i < 20_000; i++) {
      const nanos = String(Math.floor(Math.random() * 1e9)).padStart(9, '0');
      const key = `2024-02-29T23:59:59.${nanos}Z`;
      const pos = storedPosition(key) as string;
      expect(pos).toBe(reference(key));
      // The walk reads a position's milliseconds digit by digit, as Date.parse reads them.
      expect(validKeyMillis(pos)).toBe(Date.parse(pos));
    }
  });
});

describe('BackfillWalk', () => {
  it('holds entries until a day of older history has arrived, then finishes them newest first', () => {
    const w = new BackfillWalk(pack, 'acme');
    const day1 = [
      entry('B', '2025-01-03T00:00:00.000000000Z', { enabled: false }),
      entry('A', '2025-01-03T00:00:00.000000000Z'),
    ];
    expect(w.add(day1)).toEqual([]);
    expect(w.heldCount).toBe(2);
    const changes = w.add([
      entry('C', '2025-01-01T00:00:00.000000000Z', { enabled: true, requireToolApproval: true }),
    ]);
    // A and B share a microsecond: A (lower id) comes first, so B's base is A. A's base would be
    // C, but an entry up to 5 s newer than C may still come (and sit between them): A waits.
    expect(changes.map((c) => [c.entryId, c.change.field, c.change.oldValue, c.change.newValue])).toEqual([
      ['B', 'enabled', true, false],
    ]);
    expect(w.heldCount).toBe(2);
    // One that does come: the next batch holds an entry 3 s newer than C.
    expect(w.add([entry('D', '2025-01-01T00:00:03.000000000Z', null)])).toEqual([]);
    const done = w.finish();
    // D has no snapshot, so A's base is still C; D and C are diffed at the end.
    expect(done.changes.map((c) => [c.entryId, c.change.field, c.change.oldValue])).toEqual([
      ['A', 'require_tool_approval', true],
      ['C', 'enabled', null],
      ['C', 'require_tool_approval', null],
    ]);
    expect(done.result?.first?.entryId).toBe('C');
    expect(done.result?.last?.entryId).toBe('B');
  });

  it('holds an entry only for as much older history as the rules look back on (the default pack: an hour)', () => {
    // B's base is A; C, older than A by more than the few seconds of disorder, settles it.
    const feed = (w: BackfillWalk) => {
      expect(w.add([entry('B', '2025-01-01T12:00:00.000000000Z', { enabled: false })])).toEqual([]);
      expect(w.add([entry('A', '2025-01-01T10:00:00.000000000Z', { enabled: true })])).toEqual([]);
      return w.add([entry('C', '2025-01-01T08:00:00.000000000Z', { enabled: true })]);
    };
    // Four hours of history behind B: its burst window (1 h) and a minute's margin are covered.
    const hour = new BackfillWalk(pack, 'acme');
    expect(feed(hour).map((c) => [c.entryId, c.change.field])).toEqual([['B', 'enabled']]);
    expect(hour.heldCount).toBe(2);
    // A pack that looks back twelve hours keeps B until twelve hours of history have come.
    const burst = pack.rules.find((r) => r.condition.entries_in_window !== undefined);
    const halfDay = {
      ...pack,
      rules: [
        ...pack.rules.filter((r) => r !== burst),
        { ...burst!, condition: { entries_in_window: { count: 3, window: '12h' } } },
      ],
    };
    const held = new BackfillWalk(halfDay, 'acme');
    expect(feed(held)).toEqual([]);
    expect(held.heldCount).toBe(3);
    expect(held.finish().changes.map((c) => c.entryId)).toEqual(['B', 'C']);
  });

  it('gives up when an entry arrives out of time order by more than a few seconds', () => {
    const w = new BackfillWalk(pack, 'acme');
    w.add([entry('B', '2025-01-03T00:00:00.000000000Z')]);
    w.add([entry('A', '2025-01-01T00:00:00.000000000Z')]);
    expect(w.gaveUp).toBeUndefined();
    // Within a few seconds of the oldest: the API's same-second disorder, taken in.
    w.add([entry('A2', '2025-01-01T00:00:04.000000000Z')]);
    expect(w.gaveUp).toBeUndefined();
    expect(w.add([entry('Z', '2025-01-02T00:00:00.000000000Z')])).toEqual([]);
    expect(w.gaveUp).toMatch(/out of time order/);
    expect(w.finish().result).toBeUndefined();
  });

  it('gives up rather than hold more than its limit', () => {
    const w = new BackfillWalk(pack, 'acme', 3);
    w.add([1, 2, 3, 4].map((i) => entry(`E${i}`, `2025-01-01T00:00:0${i}.000000000Z`)));
    expect(w.gaveUp).toMatch(/more than 3 entries waiting/);
  });

  it('stands in for the stored walk only for burst windows up to a day', () => {
    expect(canWalkInMemory(pack)).toBe(true);
    const long = {
      ...pack,
      rules: [
        ...pack.rules,
        { ...pack.rules[0]!, id: 'X', condition: { entries_in_window: { count: 3, window: '2d' } } },
      ],
    };
    expect(canWalkInMemory(long)).toBe(false);
  });
});
