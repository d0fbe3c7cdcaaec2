/**
 * A first run computes field changes from the entries as they are inserted (backfill-walk.ts)
 * instead of reading them back. It must write exactly what the stored walk writes: the same
 * field_change rows and the same backfill digest, on histories built to be awkward.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxOptions } from '../../src/sandbox/index.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

async function harness(options: SandboxOptions, shape?: (h: Harness) => void): Promise<Harness> {
  const h = await createHarness(options);
  open.push(h);
  shape?.(h);
  return h;
}

interface Outcome {
  changes: unknown[];
  alerts: unknown[];
  inserted: number;
}

function walkUsed(h: Harness): string | undefined {
  const line = h.logs.find((l) => l.includes('field changes and alerts written'));
  return line === undefined ? undefined : (JSON.parse(line) as { walk: string }).walk;
}

async function outcome(h: Harness, walkInMemory: boolean): Promise<Outcome> {
  const run = await h.sync({ walkInMemory, tenant: { pageSize: 50 } });
  expect(run.status).toBe('succeeded');
  if (!walkInMemory) expect(walkUsed(h)).toBe('stored');
  const db = h.database.db;
  const changes = await sql`
    select entry_id, field, old_value, new_value, direction from govtrail.field_change
    order by entry_id collate "C", field`.execute(db);
  const alerts = await sql`
    select entry_id, rule_id, severity, title, summary, context - 'runId' as context from govtrail.alert
    order by dedupe_key`.execute(db);
  return { changes: changes.rows, alerts: alerts.rows, inserted: run.counters.entriesInserted };
}

/** Same-microsecond ties, snapshot-less PUTs, hard deletes and a burst, on top of a seeded history. */
function awkward(h: Harness): void {
  const hist = h.sandbox.history;
  hist.append(5, { at: '2026-12-01T00:00:00Z' });
  for (const id of [1, 2, 3]) {
    hist.appendEntry({ at: '2027-01-01T06:00:00.000001Z', set: { discoveryInterval: `${3600 * id}s` } });
  }
  hist.appendEntry({ at: '2027-01-01T06:00:01.000000400Z', snapshot: null });
  hist.appendEntry({ at: '2027-01-01T06:00:01.000000600Z', set: { requireToolApproval: false } });
  hist.appendEntry({ at: '2027-01-01T07:00:00Z', changeKind: 'CHANGE_KIND_HARD_DELETE', snapshot: null });
  hist.appendEntry({ at: '2027-01-01T07:00:05Z', changeKind: 'CHANGE_KIND_CREATE' });
  // Values jsonb cannot keep as they are (NUL, a lone surrogate): the stored walk sees U+FFFD.
  hist.appendEntry({ at: '2027-01-01T08:00:00Z', set: { customNote: 'a\u0000b', customMark: '\ud800x' } });
  hist.appendEntry({ at: '2027-01-01T08:00:01Z', set: { customNote: 'a\ufffdb', customMark: '\ufffdx' } });
  for (let i = 0; i < 30; i++)
    hist.appendEntry({ at: `2027-01-02T00:00:${String(i).padStart(2, '0')}Z`, annotations: [] });
  hist.append(20);
}

describe('first-run walk in memory', () => {
  it('writes the same field changes and digest as the stored walk', async () => {
    const opts = { entries: 3000, seed: 77 };
    const a = await outcome(await harness(opts, awkward), false);
    const hb = await harness(opts, awkward);
    const b = await outcome(hb, true);
    expect(walkUsed(hb)).toBe('in memory');
    expect(a.inserted).toBeGreaterThan(3000);
    expect(b.inserted).toBe(a.inserted);
    expect(a.changes.length).toBeGreaterThan(3000);
    expect(b.changes).toEqual(a.changes);
    expect(a.alerts).toHaveLength(1);
    expect(b.alerts).toEqual(a.alerts);
  });

  it('agrees on the curated scenarios and on a history served with empty values', async () => {
    for (const opts of [
      { entries: 400, seed: 5, scenarios: true },
      { entries: 400, seed: 6, emitUnpopulated: true },
    ] satisfies SandboxOptions[]) {
      const a = await outcome(await harness(opts), false);
      const hb = await harness(opts);
      const b = await outcome(hb, true);
      expect(walkUsed(hb)).toBe('in memory');
      expect(b.changes).toEqual(a.changes);
      expect(b.alerts).toEqual(a.alerts);
    }
  });

  it('falls back to the stored walk when it cannot follow, with the same result', async () => {
    // An entry id outside printable ASCII: its byte order (COLLATE "C") is not checked here, so
    // the in-memory walk gives up.
    const shape = (h: Harness) => {
      awkward(h);
      h.sandbox.history.insertRaw({
        metadata: { id: 'zz-élan', createdAt: '2029-02-03T00:00:00Z', changeKind: 'CHANGE_KIND_PUT' },
        snapshot: { enabled: true, auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
      });
      h.sandbox.history.append(3);
    };
    const opts = { entries: 500, seed: 9 };
    const a = await outcome(await harness(opts, shape), false);
    const hb = await harness(opts, shape);
    const b = await outcome(hb, true);
    expect(hb.logs.some((l) => l.includes('field changes will be computed from the stored entries'))).toBe(
      true,
    );
    expect(walkUsed(hb)).toBe('stored');
    expect(b.changes).toEqual(a.changes);
    expect(b.alerts).toEqual(a.alerts);
  });
});
