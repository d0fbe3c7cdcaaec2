/** HistoryStore's rewrite, remove, backdate and expire, without a server. */
import { describe, expect, it } from 'vitest';
import { HistoryStore } from '../../src/sandbox/history.js';
import type { SandboxEntry } from '../../src/sandbox/wire.js';

const START = '2025-01-06T09:00:00Z';
const store = (entries: number, options: { emitUnpopulated?: boolean } = {}) =>
  new HistoryStore({ entries, seed: 5, start: START, ...options });
const idOf = (e: SandboxEntry): string => e.metadata!.id!;
const ids = (h: HistoryStore): string[] => h.entries().map(idOf);

describe('sandbox history: reconcile mutations', () => {
  it('finds entries by served id: seeded, appended, late, raw and duplicates', () => {
    const h = store(50);
    const seeded = h.entries()[30]!;
    expect(h.positionOfId(idOf(seeded))).toBe(h.size - 1 - 30);
    const appended = h.appendEntry();
    expect(h.positionOfId(idOf(appended))).toBe(h.size - 1);
    const late = h.backdate({ at: '2025-01-08T00:00:00Z' });
    expect(JSON.parse(h.jsonAt(h.positionOfId(idOf(late))))).toEqual(late);
    // A duplicate served under another entry's id: the original is the one found.
    h.appendEntry({ extraMetadata: { id: idOf(seeded) } });
    const found = h.positionOfId(idOf(seeded));
    expect(h.cursorAt(found).key).toBe(idOf(seeded));
    expect(JSON.parse(h.jsonAt(found))).toEqual(seeded);
    // An id that is no sort key at all.
    h.appendEntry({ extraMetadata: { id: 'not-a-ksuid' } });
    expect(h.positionOfId('not-a-ksuid')).toBe(h.size - 1);
    h.insertRaw({ metadata: { id: 'raw-one' }, odd: true });
    expect(h.positionOfId('raw-one')).toBe(h.size - 1);
    expect(h.positionOfId('2zzzzzzzzzzzzzzzzzzzzzzzzzz')).toBe(-1);
  });

  it('rewrites keep the sort key, the position and the id, and change the version', () => {
    const h = store(40);
    const target = h.entries()[12]!;
    const position = h.positionOfId(idOf(target));
    const cursor = h.cursorAt(position);
    const version = h.version;
    const v2 = h.rewrite(idOf(target), { set: { enabled: false }, metadata: { traceId: 'abc' } });
    expect(h.version).not.toBe(version);
    expect(h.cursorAt(position)).toEqual(cursor);
    expect(v2.metadata).toEqual({ ...target.metadata, traceId: 'abc' });
    // false clears the field, as in EntrySpec.set.
    expect(v2.snapshot).not.toHaveProperty('enabled');
    expect(h.entries()[12]).toEqual(v2);
    const v3 = h.rewrite(idOf(target));
    expect(v3).not.toEqual(v2);
    expect(v3).not.toEqual(target);
    expect(v3.metadata?.annotations).toContainEqual(expect.objectContaining({ key: 'sandbox_rewrite' }));
    const v4 = h.rewrite(idOf(target));
    expect(new Set([target, v2, v3, v4].map((v) => JSON.stringify(v))).size).toBe(4);
    // One rewrite annotation, replaced, not one more per rewrite.
    expect(v4.metadata?.annotations?.filter((a) => a.key === 'sandbox_rewrite')).toHaveLength(1);
  });

  it('rewrites an entry without a snapshot by its metadata, and refuses `set` on it', () => {
    const h = store(20);
    const deleted = h.appendEntry({ changeKind: 'CHANGE_KIND_HARD_DELETE' });
    h.append(2);
    const again = h.rewrite(idOf(deleted));
    expect(again).not.toHaveProperty('snapshot');
    expect(again).not.toEqual(deleted);
    expect(() => h.rewrite(idOf(deleted), { set: { enabled: true } })).toThrow(/no snapshot/);
    expect(
      h.rewrite(idOf(deleted), { metadata: { changeKind: 'CHANGE_KIND_PUT' } }).metadata?.changeKind,
    ).toBe('CHANGE_KIND_PUT');
  });

  it('serves rewrites in the encoding of the history, and raw entries as given', () => {
    const h = store(30, { emitUnpopulated: true });
    const target = h.entries()[4]!;
    const v2 = h.rewrite(idOf(target), { set: { requireToolApproval: false } });
    expect(v2.snapshot?.['requireToolApproval']).toBe(false);
    expect(v2.metadata).toEqual(target.metadata);
    h.insertRaw({ metadata: { id: 'raw' }, snapshot: { enabled: true, weird: 0 } });
    expect(h.rewrite('raw', { set: { enabled: false } })).toEqual({
      metadata: { id: 'raw' },
      snapshot: { enabled: false, weird: 0 },
    });
  });

  it('removes entries anywhere; size, positions, cursors and the truth follow', () => {
    const h = store(60);
    const before = ids(h);
    const gone = [before[0]!, before[29]!, before[59]!];
    for (const id of gone) h.remove(id);
    expect(h.size).toBe(57);
    expect(ids(h)).toEqual(before.filter((id) => !gone.includes(id)));
    for (const id of gone) expect(h.positionOfId(id)).toBe(-1);
    expect(() => h.remove(gone[1]!)).toThrow(/no entry with id/);
    // A cursor naming a removed entry still places the entries around it.
    const kept = h.positionOfId(before[28]!);
    expect(h.positionOf({ key: gone[1]!, index: -1 })).toBe(kept);
    // A removed late arrival and a removed rewrite are gone too.
    const late = h.insertLate({ at: '2025-01-07T00:00:00Z' });
    h.rewrite(before[10]!);
    h.remove(idOf(late));
    h.remove(before[10]!);
    expect(ids(h)).toEqual(before.filter((id) => !gone.includes(id) && id !== before[10]));
  });

  it('expires the oldest entries and reports the oldest left', () => {
    const h = store(30);
    const before = h.entries();
    expect(h.expire(0)).toEqual({ expired: 0, size: 30, oldest: before[29]!.metadata!.createdAt });
    expect(h.expire(4)).toEqual({ expired: 4, size: 26, oldest: before[25]!.metadata!.createdAt });
    expect(h.entries()).toEqual(before.slice(0, 26));
    expect(() => h.expire(-1)).toThrow(RangeError);
    expect(() => h.expire(1.5)).toThrow(RangeError);
    // A backdated entry older than all that is left is the next to expire.
    const old = h.backdate({ at: '2024-06-01T00:00:00Z' });
    expect(h.entries().at(-1)).toEqual(old);
    expect(h.expire(1).oldest).toBe(before[25]!.metadata!.createdAt);
    expect(h.expire(100)).toEqual({ expired: 26, size: 0, oldest: null });
    // The history goes on after everything expired.
    const next = h.append(1);
    expect(h.entries()).toEqual(next);
  });

  it('keeps the truth stream consistent when the history changes while it is read', () => {
    const h = store(40);
    const before = ids(h);
    const lines = h.jsonLines();
    const seen: string[] = [];
    for (let k = 0; k < 10; k++) seen.push(idOf(JSON.parse(lines.next().value as string) as SandboxEntry));
    h.expire(5);
    h.remove(before[20]!);
    h.remove(before[3]!); // already produced
    for (const line of lines) seen.push(idOf(JSON.parse(line) as SandboxEntry));
    expect(seen).toEqual(before.slice(0, 35).filter((id) => id !== before[20]));
  });

  it('touches only the entries it changes in a large history', () => {
    const h = store(200_000);
    const size = h.size;
    const t = performance.now();
    for (let k = 0; k < 50; k++) {
      const id = JSON.parse(h.jsonAt(1000 + k * 3000)) as SandboxEntry;
      h.rewrite(idOf(id));
      h.remove(idOf(id));
    }
    h.expire(1000);
    expect(h.size).toBe(size - 1050);
    // Generating 200 000 entries takes seconds; 100 changes must not.
    expect(performance.now() - t).toBeLessThan(1000);
  });
});
