import { describe, expect, it } from 'vitest';
import { HistoryStore } from '../../src/sandbox/history.js';
import { ksuidSeconds } from '../../src/sandbox/ksuid.js';
import { Random } from '../../src/sandbox/random.js';
import { appendScenarios } from '../../src/sandbox/scenarios.js';
import {
  applyChange,
  chooseChange,
  createModel,
  modelToJson,
  modelToWire,
} from '../../src/sandbox/settings.js';
import type { SandboxEntry } from '../../src/sandbox/wire.js';

const START = '2025-01-06T09:00:00Z';
const store = (entries: number, seed = 1) => new HistoryStore({ entries, seed, start: START });

const BIG = store(2000).entries();

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3}|\.\d{6}|\.\d{9})?Z$/;
const DURATION = /^\d+(\.\d{3}|\.\d{6}|\.\d{9})?s$/;
const KSUID = /^[0-9A-Za-z]{27}$/;

function secondOf(createdAt: string): number {
  return Date.parse(`${createdAt.slice(0, 19)}Z`) / 1000;
}

/** Chronological order: by createdAt (second, then the fraction), not by KSUID. */
function chronological(entries: readonly SandboxEntry[]): SandboxEntry[] {
  const key = (e: SandboxEntry) => {
    const at = e.metadata!.createdAt!;
    return [secondOf(at), Number(`0${at.slice(19, -1) || '.0'}`)] as const;
  };
  return [...entries].sort((a, b) => {
    const [sa, fa] = key(a);
    const [sb, fb] = key(b);
    return sa - sb || fa - fb;
  });
}

/** Every value protojson would have omitted: false, 0, "", [], null. */
function defaults(value: unknown, path = '$'): string[] {
  if (value === null || value === false || value === 0 || value === '') return [path];
  if (Array.isArray(value)) {
    if (value.length === 0) return [path];
    return value.flatMap((v, i) => defaults(v, `${path}[${i}]`));
  }
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => defaults(v, `${path}.${k}`));
  }
  return [];
}

describe('sandbox history generator', () => {
  it('produces byte-identical histories for the same seed and length, and different ones otherwise', () => {
    const a = [...store(500, 7).jsonLines()];
    const b = [...store(500, 7).jsonLines()];
    expect(b).toEqual(a);
    expect([...store(500, 8).jsonLines()]).not.toEqual(a);
    // Appends continue deterministically too.
    const x = store(50, 3);
    const y = store(50, 3);
    expect(JSON.stringify(y.append(5))).toBe(JSON.stringify(x.append(5)));
  });

  it('serves entries newest first by KSUID, each KSUID minted in the second of its createdAt', () => {
    const ids = BIG.map((e) => e.metadata!.id!);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 0; i < BIG.length; i++) {
      const m = BIG[i]!.metadata!;
      expect(m.id).toMatch(KSUID);
      expect(ksuidSeconds(m.id!)).toBe(secondOf(m.createdAt!));
      if (i > 0) expect(ids[i - 1]! > ids[i]!).toBe(true);
    }
  });

  it('starts with a CREATE at the start time and follows every HARD_DELETE with a CREATE', () => {
    const chrono = chronological(BIG);
    expect(chrono[0]!.metadata).toMatchObject({
      changeKind: 'CHANGE_KIND_CREATE',
      createdAt: '2025-01-06T09:00:00Z',
    });
    const kinds = chrono.map((e) => e.metadata!.changeKind);
    expect(kinds.filter((k) => k === 'CHANGE_KIND_HARD_DELETE').length).toBeGreaterThan(0);
    kinds.forEach((kind, i) => {
      if (kind === 'CHANGE_KIND_HARD_DELETE' && i + 1 < kinds.length)
        expect(kinds[i + 1]).toBe('CHANGE_KIND_CREATE');
      if (kind === 'CHANGE_KIND_CREATE' && i > 0) expect(kinds[i - 1]).toBe('CHANGE_KIND_HARD_DELETE');
    });
    for (const e of chrono) {
      if (e.metadata!.changeKind === 'CHANGE_KIND_HARD_DELETE') expect(e).not.toHaveProperty('snapshot');
      else expect(e.snapshot).toBeDefined();
    }
  });

  it('spreads entries from minutes to days apart, with several in one second at times', () => {
    const seconds = chronological(store(200).entries()).map((e) => secondOf(e.metadata!.createdAt!));
    const gaps = seconds.slice(1).map((s, i) => s - seconds[i]!);
    expect(gaps.filter((g) => g === 0).length).toBeGreaterThan(2);
    expect(gaps.filter((g) => g > 0 && g < 3600).length).toBeGreaterThan(10);
    expect(gaps.filter((g) => g >= 86_400).length).toBeGreaterThan(20);
    const perSecond = new Map<number, number>();
    for (const s of BIG.map((e) => secondOf(e.metadata!.createdAt!)))
      perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
    expect([...perSecond.values()].filter((n) => n >= 2).length).toBeGreaterThan(20);
    expect(Math.max(...perSecond.values())).toBeGreaterThanOrEqual(3);
  });

  it('uses every actor kind and every annotation kind of the API, plus a few it does not know', () => {
    const actorKinds = new Set(BIG.map((e) => e.metadata!.actor?.kind ?? '(omitted)'));
    for (const kind of [
      'ACTOR_KIND_API',
      'ACTOR_KIND_SLACK',
      'ACTOR_KIND_MSTEAMS',
      'ACTOR_KIND_JIRA_CLOUD',
      'ACTOR_KIND_INTERNAL',
      'ACTOR_KIND_SUPPORT',
      'ACTOR_KIND_WORKFLOW',
      'ACTOR_KIND_SCIM',
      // ACTOR_KIND_UNSPECIFIED is enum value 0: protojson omits it.
      '(omitted)',
    ]) {
      expect(actorKinds).toContain(kind);
    }
    const annotationKinds = new Set(
      BIG.flatMap((e) => e.metadata!.annotations ?? []).map((a) => a.kind ?? '(omitted)'),
    );
    for (const kind of [
      'ANNOTATION_KIND_GENERIC',
      'ANNOTATION_KIND_TICKET',
      'ANNOTATION_KIND_REASON',
      'ANNOTATION_KIND_WORKFLOW',
      'ANNOTATION_KIND_BATCH',
      'ANNOTATION_KIND_CORRELATION',
      'ANNOTATION_KIND_AUTOMATION',
      'ANNOTATION_KIND_APPROVAL',
      '(omitted)',
    ]) {
      expect(annotationKinds).toContain(kind);
    }
    const snapshots = BIG.map((e) => e.snapshot).filter((s) => s !== undefined);
    expect(snapshots.some((s) => s['auditVerbosity'] === 'AUDIT_VERBOSITY_DEBUG')).toBe(true);
    expect(
      snapshots.some((s) =>
        (s['allowedClientTypes'] as string[] | undefined)?.includes('MCP_CLIENT_TYPE_ROBOT'),
      ),
    ).toBe(true);
  });

  it('leaves out every default value, as protojson does', () => {
    expect(BIG.flatMap((e) => defaults(e))).toEqual([]);
    // …while set messages are written even when zero: a disabled lifecycle transition is "0s".
    const durations = BIG.flatMap((e) =>
      Object.values((e.snapshot?.['defaultClientLifecycle'] as object) ?? {}),
    );
    expect(durations).toContain('0s');
    expect(durations.every((d) => typeof d === 'string' && DURATION.test(d))).toBe(true);
  });

  it('writes metadata the way the API documents it', () => {
    const createdAtForms = new Set<string>();
    let annotated = 0;
    let unannotated = 0;
    for (const e of BIG) {
      const m = e.metadata!;
      expect(m.createdAt).toMatch(TIMESTAMP);
      createdAtForms.add(String((m.createdAt!.split('.')[1] ?? 'Z').length - 1));
      const kind = m.actor?.kind;
      if (kind === 'ACTOR_KIND_API' || kind === 'ACTOR_KIND_SUPPORT') expect(m.actor?.userId).toMatch(KSUID);
      else expect(m.actor).not.toHaveProperty('userId');
      if (kind === 'ACTOR_KIND_WORKFLOW' || kind === 'ACTOR_KIND_INTERNAL')
        expect(m).not.toHaveProperty('syslogEventId');
      else expect(ksuidSeconds(m.syslogEventId!)).toBe(secondOf(m.createdAt!));
      if (m.traceId !== undefined) expect(m.traceId).toMatch(/^[0-9a-f]{32}$/);
      const annotations = m.annotations ?? [];
      if (annotations.length === 0) unannotated++;
      else annotated++;
      expect(annotations.length).toBeLessThanOrEqual(4);
      for (const a of annotations) {
        expect(a.key).toMatch(/^[a-z][a-z0-9_.-]{0,63}$/);
        expect(Buffer.byteLength(a.rawValue ?? '')).toBeLessThanOrEqual(512);
      }
      const ticket = annotations.find((a) => a.kind === 'ANNOTATION_KIND_TICKET');
      if (ticket?.displayUrl?.includes('atlassian')) {
        expect(ticket).toMatchObject({ key: 'ticket_id', displayLabel: 'Ticket' });
        expect(ticket.displayUrl).toBe(`https://acme.atlassian.net/browse/${ticket.displayValue}`);
      }
      if (e.snapshot !== undefined) expect(e.snapshot['updatedAt']).toBe(m.createdAt);
    }
    expect([...createdAtForms].sort()).toEqual(['0', '3', '6', '9']);
    expect(unannotated).toBeGreaterThan(20);
    expect(annotated).toBeGreaterThan(unannotated * 5);
  });

  it('introduces the newer snapshot fields part-way through the history', () => {
    const chrono = chronological(BIG);
    const firstWith = (field: string) =>
      chrono.findIndex((e) => e.snapshot !== undefined && field in e.snapshot);
    for (const field of ['codeModeConcurrency', 'untrustedJudgeDisable']) {
      const i = firstWith(field);
      expect(i).toBeGreaterThan(chrono.length * 0.2);
      expect(i).toBeLessThan(chrono.length * 0.9);
    }
  });

  it('writes snapshots by concatenation exactly as JSON.stringify would', () => {
    for (let seed = 0; seed < 20; seed++) {
      const rng = new Random(seed);
      const model = createModel(rng);
      for (let i = 0; i < 200; i++) {
        applyChange(model, chooseChange(model, rng, i / 200));
        const wire = modelToWire(model, '2025-01-06T09:00:00Z', '2025-02-01T00:00:00.5Z');
        expect(modelToJson(model, '2025-01-06T09:00:00Z', '2025-02-01T00:00:00.5Z')).toBe(
          JSON.stringify(wire),
        );
      }
    }
  });

  it('builds entries from specs over the current settings', () => {
    const h = store(30, 4);
    const before = h.entries()[0]!.snapshot!;
    const e = h.appendEntry({
      at: '2030-01-01T00:00:00.5+01:00',
      set: { requireToolApproval: false, defaultClientLifecycle: { inactivityCloseAfter: '0s' } },
    });
    expect(h.entries()[0]).toEqual(e);
    expect(e.metadata).toMatchObject({
      createdAt: '2029-12-31T23:00:00.500Z',
      changeKind: 'CHANGE_KIND_PUT',
      actor: { kind: 'ACTOR_KIND_API' },
      annotations: [{ key: 'ticket_id', kind: 'ANNOTATION_KIND_TICKET', displayLabel: 'Ticket' }],
    });
    expect(e.snapshot).not.toHaveProperty('requireToolApproval');
    expect(e.snapshot!['defaultClientLifecycle']).toEqual({
      ...(before['defaultClientLifecycle'] as object),
      inactivityCloseAfter: '0s',
    });
    expect(e.snapshot!['createdAt']).toBe(before['createdAt']);

    const bare = h.appendEntry({
      annotations: [],
      actor: { kind: 'ACTOR_KIND_WORKFLOW' },
      extraMetadata: { x: 1 },
    });
    expect(bare.metadata).not.toHaveProperty('annotations');
    expect(bare.metadata).not.toHaveProperty('syslogEventId');
    expect(bare.metadata!.actor).toEqual({ kind: 'ACTOR_KIND_WORKFLOW' });
    expect(bare.metadata!['x']).toBe(1);

    const deleted = h.appendEntry({ changeKind: 'CHANGE_KIND_HARD_DELETE' });
    expect(deleted).not.toHaveProperty('snapshot');
    const [recreated] = h.append(1);
    expect(recreated!.metadata!.changeKind).toBe('CHANGE_KIND_CREATE');
    expect(recreated!.snapshot!['createdAt']).toBe(recreated!.metadata!.createdAt);
    expect(() => h.appendEntry({ at: '2020-01-01T00:00:00Z' })).toThrow(/insertLate/);
  });

  it('sorts late arrivals behind the newest entry and raw entries where they are put', () => {
    const h = store(100, 5);
    const top = h.entries()[0]!;
    const late = h.insertLate({
      at: '2025-02-01T12:00:00Z',
      set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
    });
    const list = h.entries();
    expect(list[0]).toEqual(top);
    const i = list.findIndex((e) => e.metadata?.id === late.metadata!.id);
    expect(list[i - 1]!.metadata!.id! > late.metadata!.id!).toBe(true);
    expect(list[i + 1]!.metadata!.id! < late.metadata!.id!).toBe(true);
    expect(late.snapshot!['auditVerbosity']).toBe('AUDIT_VERBOSITY_MINIMAL');
    expect(() => h.insertLate({ at: '2099-01-01T00:00:00Z' })).toThrow(RangeError);

    h.insertRaw({ metadata: { changeKind: 'CHANGE_KIND_PUT' } });
    expect(h.entries()[0]).toEqual({ metadata: { changeKind: 'CHANGE_KIND_PUT' } });
    h.insertRaw('not an object', { at: '2025-01-06T09:00:00Z' });
    expect(h.entries().at(-1)).toBe('not an object');
    const [next] = h.append(1);
    expect(h.entries()[0]).toEqual(next);
    expect(h.size).toBe(104);
  });

  it('can write every field, defaults included, as grpc-gateway’s default marshaler does', () => {
    const plain = store(2000, 1).entries();
    const h = new HistoryStore({ entries: 2000, seed: 1, start: START, emitUnpopulated: true });
    h.insertRaw({ raw: true });
    const full = h.entries();
    expect(full[0]).toEqual({ raw: true });
    full.slice(1).forEach((e, i) => {
      const m = e.metadata!;
      expect(m.id).toBe(plain[i]!.metadata!.id);
      expect(Object.keys(m).slice(0, 7)).toEqual([
        'id',
        'createdAt',
        'changeKind',
        'actor',
        'annotations',
        'syslogEventId',
        'traceId',
      ]);
      expect(m.syslogEventId).toBe(plain[i]!.metadata!.syslogEventId ?? '');
      expect(m.actor!.kind).toBe(plain[i]!.metadata!.actor?.kind ?? 'ACTOR_KIND_UNSPECIFIED');
      expect(m.annotations).toHaveLength(plain[i]!.metadata!.annotations?.length ?? 0);
      for (const a of m.annotations!) expect(Object.keys(a)).toHaveLength(6);
      if (m.changeKind === 'CHANGE_KIND_HARD_DELETE') expect(e.snapshot).toBeNull();
      else {
        expect(e.snapshot!['requireToolApproval']).toBe(plain[i]!.snapshot!['requireToolApproval'] ?? false);
        expect(e.snapshot!['allowedClientTypes']).toEqual(plain[i]!.snapshot!['allowedClientTypes'] ?? []);
        expect(Object.keys(e.snapshot!['defaultClientLifecycle'] as object)).toHaveLength(3);
      }
    });
    expect(full.some((e) => e.snapshot === null)).toBe(true);
  });

  it('starts from nothing when asked for an empty history', () => {
    const h = store(0);
    expect(h.entries()).toEqual([]);
    const [first] = h.append(1);
    expect(first!.metadata!.changeKind).toBe('CHANGE_KIND_CREATE');
  });

  it('appends a scenario tail that covers every default alert trigger', () => {
    const h = store(20, 9);
    expect(appendScenarios(h)).toBe(14);
    const tail = h.entries().slice(0, 14).reverse();
    expect(tail.map((e) => e.metadata!.changeKind)).toContain('CHANGE_KIND_HARD_DELETE');
    expect(tail.some((e) => e.metadata!.actor?.kind === 'ACTOR_KIND_SUPPORT')).toBe(true);
    expect(tail.some((e) => e.metadata!.annotations === undefined)).toBe(true);
    expect(tail[1]!.snapshot).not.toHaveProperty('requireToolApproval');
    expect(tail[0]!.snapshot!['requireToolApproval']).toBe(true);
    // Deterministic, like the rest of the history.
    const again = store(20, 9);
    appendScenarios(again);
    expect([...again.jsonLines()]).toEqual([...h.jsonLines()]);
  });
});
