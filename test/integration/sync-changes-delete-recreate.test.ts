/**
 * No blind spot in the diff (docs/design/integrity.md): a CREATE after a HARD_DELETE is diffed against the
 * last snapshot before the delete, so switching approval off by deleting the settings and
 * re-creating them weaker is a `loosened` change that raises AIGOV-002 and AIGOV-003 — within
 * one run and across runs, in the stored walk and in the first run's in-memory walk.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  alertRows,
  appendSteps,
  BASELINE,
  fieldChanges,
  idOf,
  runScenario,
  type Step,
  ticket,
} from '../helpers/alerts.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

const DELETE: Step = { changeKind: 'CHANGE_KIND_HARD_DELETE', annotations: [ticket('SEC-9')] };
const WEAKER_CREATE: Step = {
  changeKind: 'CHANGE_KIND_CREATE',
  annotations: [ticket('SEC-10')],
  snapshot: {
    ...BASELINE,
    requireToolApproval: false,
    auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL',
    createdAt: '2030-01-01T00:00:00Z',
    updatedAt: '2030-01-01T00:00:00Z',
  },
};

const LOOSENED = [
  {
    field: 'audit_verbosity',
    old_value: 'AUDIT_VERBOSITY_FULL',
    new_value: 'AUDIT_VERBOSITY_MINIMAL',
    direction: 'loosened',
  },
  { field: 'require_tool_approval', old_value: true, new_value: false, direction: 'loosened' },
];

/** Field changes of one entry on the two fields the scenario weakens. */
async function loosenings(h: Harness, entryId: string) {
  return (await fieldChanges(h.database.db, [entryId])).filter(
    (c) => c.field === 'audit_verbosity' || c.field === 'require_tool_approval',
  );
}

function rulesOf(alerts: Array<{ rule_id: string; entry_id: string | null }>, entryId: string): string[] {
  return alerts
    .filter((a) => a.entry_id === entryId)
    .map((a) => a.rule_id)
    .sort();
}

describe('a CREATE after a HARD_DELETE', () => {
  it('is diffed against the snapshot before the delete when both arrive in one run', async () => {
    const s = await runScenario({ after: [DELETE, WEAKER_CREATE] });
    open.push(s.h);
    const [del, create] = s.entries.map(idOf) as [string, string];
    expect(await loosenings(s.h, create)).toEqual(LOOSENED.map((c) => ({ entry_id: create, ...c })));
    expect(rulesOf(s.alerts, del)).toEqual(['AIGOV-001']);
    expect(rulesOf(s.alerts, create)).toEqual(expect.arrayContaining(['AIGOV-002', 'AIGOV-003']));
  });

  it('is diffed against the snapshot before the delete when the delete was stored by an earlier run', async () => {
    const s = await runScenario({ before: [DELETE], after: [WEAKER_CREATE] });
    open.push(s.h);
    const [create] = s.entries.map(idOf) as [string];
    expect(await loosenings(s.h, create)).toEqual(LOOSENED.map((c) => ({ entry_id: create, ...c })));
    expect(rulesOf(s.alerts, create)).toEqual(expect.arrayContaining(['AIGOV-002', 'AIGOV-003']));
  });

  it('gets the same field changes from the in-memory walk of a first run as from the stored walk', async () => {
    const results = [];
    for (const walkInMemory of [false, true]) {
      const h = await createHarness({ entries: 30, seed: 12 });
      open.push(h);
      appendSteps(h.sandbox, [
        { annotations: [ticket('SEC-1')], set: { ...BASELINE } },
        DELETE,
        { ...DELETE, annotations: [ticket('SEC-11')] },
        WEAKER_CREATE,
      ]);
      const create = idOf(h.sandbox.history.entries()[0] as never);
      const run = await h.sync({ walkInMemory, tenant: { pageSize: 10 } });
      expect(run.status).toBe('succeeded');
      const walk = h.logs.find((l) => l.includes('field changes and alerts written'));
      expect(walk).toContain(walkInMemory ? '"walk":"in memory"' : '"walk":"stored"');
      expect(await loosenings(h, create)).toEqual(LOOSENED.map((c) => ({ entry_id: create, ...c })));
      const [digest] = await alertRows(h.database.db);
      expect(digest?.rule_id).toBe('AIGOV-016');
      const counts = (digest?.context.details as { perRuleCounts: Record<string, number> } | undefined)
        ?.perRuleCounts;
      results.push(counts);
      expect(counts?.['AIGOV-002']).toBeGreaterThanOrEqual(1);
    }
    expect(results[1]).toEqual(results[0]);
  });
});
