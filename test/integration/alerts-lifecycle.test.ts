/**
 * The alert lifecycle (docs/design/alerts.md, "Handling an alert") on real PostgreSQL: every
 * transition and every refused one, the view alert_state against a replay of the events
 * (src/core/alert-lifecycle.ts) over random sequences, snooze expiry, the append-only table, and
 * automatic resolve.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AlertDraft } from '../../src/core/alert.js';
import {
  type AlertEventKind,
  type LifecycleEvent,
  refusal,
  replay,
  stateAt,
} from '../../src/core/alert-lifecycle.js';
import type { Session } from '../../src/store/database.js';
import {
  type EventRequest,
  insertEvents,
  readAlertEvents,
  recordAlertEvents,
  resolveAlertsAutomatically,
} from '../../src/store/write/alert-events.js';
import { insertAlerts } from '../../src/store/write/outbox.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
let db: Session;
let serial = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  db = t.database.db;
});
afterAll(async () => {
  await t?.close();
});

/** Stores one alert (routed to a webhook sink) and returns its id. */
async function newAlert(o: { ruleId?: string; tenantId?: string; severity?: AlertDraft['severity'] } = {}) {
  const base = sampleAlert(new Date());
  serial += 1;
  const draft: AlertDraft = {
    ruleId: o.ruleId ?? base.ruleId,
    ruleVersion: 1,
    severity: o.severity ?? base.severity,
    title: base.title,
    summary: base.summary,
    entryId: `e${serial}`,
    dedupeKey: `${o.ruleId ?? base.ruleId}:${o.tenantId ?? 'acme'}:e${serial}`,
    context: { ...base.context, tenantId: o.tenantId ?? 'acme' },
  };
  await insertAlerts(db, o.tenantId ?? 'acme', null, [draft], [{ name: 'hook', route: {} }]);
  const { rows } = await sql<{ alert_id: string }>`select alert_id::text from govtrail.alert
                                                      where dedupe_key = ${draft.dedupeKey}`.execute(db);
  return Number(rows[0]?.alert_id);
}

async function stateOf(alertId: number) {
  const { rows } = await sql<{ state: string; assignee: string | null; resolved_note: string | null }>`
    select state, assignee, resolved_note from govtrail.alert_state where alert_id = ${alertId}`.execute(db);
  return rows[0];
}

const ev = (kind: EventRequest['kind'], extra: Partial<EventRequest> = {}): EventRequest => ({
  kind,
  actor: 'alice',
  ...extra,
});

describe('transitions', () => {
  let id: number;
  beforeEach(async () => {
    id = await newAlert();
  });

  it('open → acknowledged → snoozed → resolved with a note → reopened, each with who and when', async () => {
    expect((await stateOf(id))?.state).toBe('open');
    await recordAlertEvents(db, [id], ev('acknowledged'));
    expect((await stateOf(id))?.state).toBe('acknowledged');
    await recordAlertEvents(db, [id], ev('assigned', { assignee: 'bob' }));
    expect(await stateOf(id)).toMatchObject({ state: 'acknowledged', assignee: 'bob' });
    await recordAlertEvents(db, [id], ev('snoozed', { forSeconds: 3600 }));
    expect((await stateOf(id))?.state).toBe('snoozed');
    await recordAlertEvents(db, [id], ev('noted', { note: 'waiting for the change window' }));
    await recordAlertEvents(db, [id], ev('resolved', { note: 'reverted by the admin' }));
    expect(await stateOf(id)).toMatchObject({ state: 'resolved', resolved_note: 'reverted by the admin' });
    await recordAlertEvents(db, [id], ev('reopened'));
    expect(await stateOf(id)).toMatchObject({ state: 'open', resolved_note: null });
    const events = (await readAlertEvents(db, [id])).get(String(id)) ?? [];
    expect(events.map((e) => e.kind)).toEqual([
      'acknowledged',
      'assigned',
      'snoozed',
      'noted',
      'resolved',
      'reopened',
    ]);
    for (const e of events) expect(e.actor).toBe('alice');
    // Time comes from the database: the transaction's now(), never in the future.
    const { rows } = await sql<{ ok: boolean }>`select bool_and(at <= now()) as ok from govtrail.alert_event
                                                 where alert_id = ${id}`.execute(db);
    expect(rows[0]?.ok).toBe(true);
  });

  it.each([
    ['resolving a resolved alert', ['resolved'], ev('resolved'), /is resolved/],
    ['acknowledging a resolved alert', ['resolved'], ev('acknowledged'), /is resolved/],
    ['snoozing a resolved alert', ['resolved'], ev('snoozed', { forSeconds: 60 }), /is resolved/],
    ['assigning a resolved alert', ['resolved'], ev('assigned', { assignee: 'bob' }), /is resolved/],
    ['acknowledging twice', ['acknowledged'], ev('acknowledged'), /already acknowledged by alice/],
    ['reopening an open alert', [], ev('reopened'), /is open, not resolved or snoozed/],
    ['reopening an acknowledged alert', ['acknowledged'], ev('reopened'), /is acknowledged/],
    ['a note without text', [], ev('noted', { note: '  ' }), /needs --note/],
    [
      'assigning to the current assignee',
      ['assigned'],
      ev('assigned', { assignee: 'bob' }),
      /already assigned to bob/,
    ],
    [
      'snoozing into the past',
      [],
      ev('snoozed', { until: new Date('2020-01-01T00:00:00Z') }),
      /not in the future/,
    ],
  ] as const)('refuses %s with a USAGE error, recording nothing', async (_name, before, request, message) => {
    for (const k of before) {
      await recordAlertEvents(
        db,
        [id],
        ev(k as EventRequest['kind'], k === 'assigned' ? { assignee: 'bob' } : {}),
      );
    }
    const count = async () =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from govtrail.alert_event where alert_id = ${id}`.execute(db)
      ).rows[0]?.n;
    const n = await count();
    await expect(recordAlertEvents(db, [id], request)).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(message),
    });
    expect(await count()).toBe(n);
  });

  it('a snoozed alert reopened by hand is open again; a note on a resolved alert is accepted', async () => {
    await recordAlertEvents(db, [id], ev('snoozed', { forSeconds: 600 }));
    await recordAlertEvents(db, [id], ev('reopened'));
    expect((await stateOf(id))?.state).toBe('open');
    await recordAlertEvents(db, [id], ev('resolved'));
    await recordAlertEvents(db, [id], ev('noted', { note: 'post-mortem filed' }));
    expect((await stateOf(id))?.state).toBe('resolved');
  });

  it('refuses an unknown alert, and records nothing for the known ones named with it', async () => {
    await expect(recordAlertEvents(db, [id, 999_999], ev('acknowledged'))).rejects.toMatchObject({
      code: 'USAGE',
      message: 'alert 999999: no such alert',
    });
    expect((await stateOf(id))?.state).toBe('open');
  });

  it('a snooze expires: the alert shows its state before the snooze once until has passed', async () => {
    await recordAlertEvents(db, [id], ev('acknowledged'));
    // A snooze whose until is already behind: inserted directly, as the refusal would stop the command.
    await insertEvents(db, [
      { alertId: id, kind: 'snoozed', actor: 'alice', until: new Date(Date.now() - 1000), automatic: false },
    ]);
    expect((await stateOf(id))?.state).toBe('acknowledged');
    await recordAlertEvents(db, [id], ev('snoozed', { forSeconds: 3600 }));
    expect((await stateOf(id))?.state).toBe('snoozed');
  });

  it('alert_event is append-only: UPDATE, DELETE and TRUNCATE are refused', async () => {
    await recordAlertEvents(db, [id], ev('acknowledged'));
    for (const statement of [
      sql`update govtrail.alert_event set actor = 'mallory' where alert_id = ${id}`,
      sql`delete from govtrail.alert_event where alert_id = ${id}`,
      sql`truncate govtrail.alert_event cascade`,
    ]) {
      await expect(statement.execute(db)).rejects.toThrow(/append-only/);
    }
  });

  it('each event gets one pending follow-up per sink the alert was routed to', async () => {
    const [e] = await recordAlertEvents(db, [id], ev('acknowledged'));
    const { rows } = await sql<{ sink: string; status: string }>`
      select sink, status from govtrail.alert_event_delivery where event_id = ${Number(e?.eventId)}`.execute(
      db,
    );
    expect(rows).toEqual([{ sink: 'hook', status: 'pending' }]);
  });
});

describe('automatic resolve', () => {
  it('resolves the unresolved alerts of a rule and tenant by govtrail with the reason, and leaves resolved ones', async () => {
    const a = await newAlert({ ruleId: 'AIGOV-017', tenantId: 'auto' });
    const b = await newAlert({ ruleId: 'AIGOV-017', tenantId: 'auto' });
    await recordAlertEvents(db, [b], ev('resolved', { note: 'by hand' }));
    const resolved = await resolveAlertsAutomatically(
      db,
      { tenantId: 'auto', ruleId: 'AIGOV-017' },
      'the sync recovered',
    );
    expect(resolved).toEqual([String(a)]);
    const { rows } = await sql<{
      resolved_by: string;
      resolved_note: string;
      resolved_automatically: boolean;
    }>`
      select resolved_by, resolved_note, resolved_automatically from govtrail.alert_state
      where alert_id = any(${[a, b]}::bigint[]) order by alert_id`.execute(db);
    expect(rows).toEqual([
      { resolved_by: 'govtrail', resolved_note: 'the sync recovered', resolved_automatically: true },
      { resolved_by: 'alice', resolved_note: 'by hand', resolved_automatically: false },
    ]);
    expect(await resolveAlertsAutomatically(db, { alertIds: [a, b] }, 'again')).toEqual([]);
  });
});

describe('alert_state equals a replay of the events', () => {
  /** A small deterministic generator, so a failure is reproducible from its seed. */
  function random(seed: number): () => number {
    let x = seed;
    return () => {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      return x / 2_147_483_648;
    };
  }
  const KINDS: readonly AlertEventKind[] = [
    'acknowledged',
    'assigned',
    'resolved',
    'snoozed',
    'reopened',
    'noted',
    'repeated',
  ];

  it('on 40 random sequences of accepted events (snoozes past and future), state by state and field by field', async () => {
    const next = random(31);
    for (let s = 0; s < 40; s++) {
      const id = await newAlert();
      const now = new Date();
      const accepted: LifecycleEvent[] = [];
      for (let i = 0; i < 12; i++) {
        const kind = KINDS[Math.floor(next() * KINDS.length)] as AlertEventKind;
        const candidate: LifecycleEvent = {
          kind,
          actor: `user${Math.floor(next() * 3)}`,
          at: now,
          note: kind === 'noted' || kind === 'resolved' ? `n${i}` : null,
          assignee: kind === 'assigned' ? `user${Math.floor(next() * 3)}` : null,
          until: kind === 'snoozed' ? new Date(now.getTime() + (next() < 0.3 ? -60_000 : 3_600_000)) : null,
        };
        // Past snoozes are stored directly (an expired snooze), so skip only the other refusals.
        const why = refusal(replay(accepted), candidate, now);
        if (why !== undefined && !(kind === 'snoozed' && /not in the future/.test(why))) continue;
        if (kind === 'repeated' && replay(accepted).resolved) continue;
        accepted.push(candidate);
        await insertEvents(db, [
          {
            alertId: id,
            kind,
            actor: candidate.actor,
            automatic: false,
            ...(candidate.note ? { note: candidate.note } : {}),
            ...(candidate.assignee ? { assignee: candidate.assignee } : {}),
            ...(candidate.until ? { until: candidate.until } : {}),
            ...(kind === 'repeated' ? { repeatCount: replay(accepted).repeats } : {}),
          },
        ]);
      }
      const stored = (await readAlertEvents(db, [id])).get(String(id)) ?? [];
      const { rows } = await sql<{
        state: string;
        assignee: string | null;
        acknowledged_by: string | null;
        resolved_by: string | null;
        resolved_note: string | null;
        snoozed_until: Date | null;
        repeats: number;
        now: Date;
      }>`select state, assignee, acknowledged_by, resolved_by, resolved_note, snoozed_until, repeats, now() as now
         from govtrail.alert_state where alert_id = ${id}`.execute(db);
      const view = rows[0];
      const fold = replay(stored);
      expect({ seq: s, ...view, now: undefined }).toEqual({
        seq: s,
        state: stateAt(fold, view?.now ?? new Date()),
        assignee: fold.assignee,
        acknowledged_by: fold.acknowledgedBy,
        resolved_by: fold.resolvedBy,
        resolved_note: fold.resolvedNote,
        snoozed_until: fold.snoozedUntil,
        repeats: fold.repeats,
        now: undefined,
      });
    }
  });
});
