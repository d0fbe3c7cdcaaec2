/**
 * Stored data does not depend on how fast it was written (issue 22): a 20 000-entry backfill of a
 * fixed sandbox history, with small pages and awkward entries (escapes jsonb refuses, keys that
 * collide once those are replaced, numbers JSON cannot write, text COPY must escape, values of the
 * wrong type, entries that are rejected or served twice), then an incremental sync that meets a
 * rewrite in its lookback window and a reconcile that meets a removed entry. Every row those runs
 * store — history_entry with its row and content hashes, its child tables, the findings, the
 * alerts, the checkpoint and the run ledger (without timestamps) — is digested table by table and
 * compared with the digest the code before the throughput work recorded
 * (test/fixtures/equivalence/backfill-20000.json). A change of what is stored, however small (a
 * hash, a byte of raw, a column), fails it and names the table.
 *
 * To record the digest again after a change of what is stored that is meant (a migration, a new
 * column): `GOVTRAIL_RECORD_EQUIVALENCE=1 npx vitest run test/integration/sync-equivalence.test.ts`,
 * and say why in the commit.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import { reconcileTenant } from '../../src/app/tenant-run.js';
import type { SandboxEntry } from '../../src/sandbox/index.js';
import type { Session } from '../../src/store/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const FIXTURE = new URL('../fixtures/equivalence/backfill-20000.json', import.meta.url);
const RECORD = process.env['GOVTRAIL_RECORD_EQUIVALENCE'] === '1';
/**
 * Small pages: many page and batch boundaries (batches of 2 000 entries, pages of 10); a lookback
 * of three days, so that the incremental sync compares many re-served entries with the store.
 */
const TENANT = { pageSize: 10, lookbackMs: 3 * 86_400_000 };

/** Entries served as JSON text, verbatim: what JSON.stringify cannot write, and the malformed. */
const AWKWARD: readonly string[] = [
  // Escapes jsonb refuses (NUL, lone surrogates) in values and in keys; an escaped backslash
  // before `u0000` that is text, not an escape; a non-BMP character, raw and escaped.
  String.raw`{"metadata":{"id":"eq-escapes","createdAt":"2025-05-01T02:00:00.123456789+02:00","changeKind":"CHANGE_KIND_PUT","actor":{"kind":"ACTOR_KIND_USER","userId":"u\u0000ser"},"note\ud800":"a\u0000b","lit":"\\u0000 stays","emoji":"\ud83d\ude00 😀"},"snapshot":{"enabled":true,"extra\u0000":"\udc00","auditVerbosity":"AUDIT_VERBOSITY_\u0000FULL"}}`,
  // Two keys that become one once jsonb's refused escapes are replaced.
  String.raw`{"metadata":{"id":"eq-collide","createdAt":"2025-05-01T00:00:01Z","changeKind":"CHANGE_KIND_PUT"},"snapshot":{"k\u0000":1,"k\ufffd":2,"enabled":false}}`,
  // Numbers: beyond double range (parsed as Infinity, written as null), negative zero, exponents,
  // integers beyond 2^53, many digits.
  `{"metadata":{"id":"eq-numbers","createdAt":"2025-05-01T00:00:02Z","changeKind":"CHANGE_KIND_PUT","n":[1e400,-1e400,-0,1e21,1E-7,12345678901234567890,0.1000000000000000055511151231257827,1.0]},"snapshot":{"codeModeConcurrency":1e3}}`,
  // Text COPY must escape in every text column: tab, newline, carriage return, backslash.
  `{"metadata":{"id":"eq-copy","createdAt":"2025-05-01T00:00:03Z","changeKind":"CHANGE_\\\\KIND","syslogEventId":"a\\tb\\nc\\rd\\\\e","traceId":"\\\\N","actor":{"kind":"ACTOR_KIND_API","userId":"x\\ny"},"annotations":[{"key":"k\\t1","kind":"ANNOTATION_KIND_TICKET","rawValue":"r\\\\v","displayValue":"line1\\nline2","displayLabel":"\\\\.","displayUrl":"http://x/\\t"}]},"snapshot":{"allowedClientTypes":["a\\tb","c\\"d","e\\\\f",null,7,{"x":1}],"discoveryInterval":"3600s","defaultClientLifecycle":{"inactivityCloseAfter":"1.5s","other":"\\\\"}}}`,
  // Values of the wrong type: warnings, columns left NULL or stored as JSON text, raw keeps them.
  `{"metadata":{"id":"eq-types","createdAt":"2025-05-01T00:00:04Z","changeKind":7,"actor":"someone","annotations":[1,{"key":"Bad Key","rawValue":{"deep":[1,2]},"displayUrl":""},{"key":"k","rawValue":"${'x'.repeat(600)}"}],"syslogEventId":["a"],"traceId":false},"snapshot":{"enabled":"yes","discoveryInterval":"soon","allowedClientTypes":"all","defaultClientLifecycle":[1],"createdAt":"yesterday","updatedAt":"2031-01-01T00:00:04.5-01:30","unknownTop":{"b":2,"a":1}}}`,
  // Dated by the KSUID: createdAt not RFC 3339, and absent; a null snapshot; no snapshot.
  `{"metadata":{"id":"2wTFM2tUSPoHj6m5EXvug8bZo6J","createdAt":"2031-13-01T00:00:00Z","changeKind":"CHANGE_KIND_PUT"},"snapshot":null}`,
  `{"metadata":{"id":"2wTFMAgYUd4doaRqyhj3T1ipViR","changeKind":"CHANGE_KIND_HARD_DELETE"}}`,
  // Rejected: no id, not an object, nested too deep.
  `{"metadata":{"createdAt":"2025-05-01T00:00:05Z"},"snapshot":{}}`,
  `["not","an","object"]`,
  `{"metadata":{"id":"eq-deep","createdAt":"2025-05-01T00:00:06Z"},"snapshot":{"x":${'['.repeat(300)}${']'.repeat(300)}}}`,
];

interface TableDigest {
  readonly rows: number;
  readonly sha256: string;
}

/**
 * Each table's rows as jsonb text, in a fixed order, hashed: timestamps of the moment (loaded_at,
 * started_at, detected_at, …) and generated ids (and the opening session's pid) left out, run ids and seq counted from the first.
 */
async function digest(trx: Session): Promise<Record<string, TableDigest>> {
  await sql`set local timezone to 'UTC'`.execute(trx);
  await sql`set local intervalstyle to 'postgres'`.execute(trx);
  const base = sql`(select coalesce(min(run_id), 1) - 1 from govtrail.sync_run)`;
  const tables: Record<string, ReturnType<typeof sql>> = {
    history_entry: sql`
      select to_jsonb(t) - 'loaded_at' - 'served_sha256' || jsonb_build_object('run_id', t.run_id - ${base},
               'seq', t.seq - (select min(seq) - 1 from govtrail.history_entry)) as r,
             t.tenant_id || ' ' || t.entry_id as k
      from govtrail.history_entry t`,
    history_annotation: sql`
      select to_jsonb(t) as r, t.tenant_id || ' ' || t.entry_id || ' ' || lpad(t.ordinal::text, 6, '0') as k
      from govtrail.history_annotation t`,
    settings_snapshot: sql`
      select to_jsonb(t) as r, t.tenant_id || ' ' || t.entry_id as k from govtrail.settings_snapshot t`,
    field_change: sql`
      select to_jsonb(t) as r, t.tenant_id || ' ' || t.entry_id || ' ' || t.field as k
      from govtrail.field_change t`,
    rejected_entry: sql`
      select to_jsonb(t) - 'rejected_id' - 'received_at' || jsonb_build_object('run_id', t.run_id - ${base}) as r,
             t.tenant_id || ' ' || t.raw_sha256 as k
      from govtrail.rejected_entry t`,
    source_discrepancy: sql`
      select to_jsonb(t) - 'discrepancy_id' - 'detected_at' || jsonb_build_object('run_id', t.run_id - ${base}) as r,
             t.tenant_id || ' ' || t.entry_id || ' ' || t.kind || ' ' || coalesce(t.source_sha256, '') as k
      from govtrail.source_discrepancy t`,
    alert: sql`
      select to_jsonb(t) - 'alert_id' - 'created_at' || jsonb_build_object('run_id', t.run_id - ${base}) as r,
             t.dedupe_key as k
      from govtrail.alert t`,
    checkpoint: sql`
      select to_jsonb(t) - 'updated_at' || jsonb_build_object('run_id', t.run_id - ${base}) as r,
             t.tenant_id as k
      from govtrail.checkpoint t`,
    sync_run: sql`
      select to_jsonb(t) - 'started_at' - 'finished_at' - 'opened_by_pid' || jsonb_build_object('run_id', t.run_id - ${base}) as r,
             lpad((t.run_id - ${base})::text, 12, '0') as k
      from govtrail.sync_run t`,
  };
  const out: Record<string, TableDigest> = {};
  for (const [name, rows] of Object.entries(tables)) {
    const { rows: res } = await sql<{ n: number; sha: string | null }>`
      select count(*)::int as n,
             encode(sha256(convert_to(coalesce(string_agg(q.r::text, E'\n' order by q.k collate "C"), ''), 'UTF8')), 'hex') as sha
      from (${rows}) q`.execute(trx);
    out[name] = { rows: res[0]?.n ?? 0, sha256: res[0]?.sha ?? '' };
  }
  return out;
}

let h: Harness | undefined;
afterAll(async () => {
  await h?.close();
});

describe('what a backfill, a sync and a reconcile store', () => {
  it('is byte for byte what the code before the throughput work stored (20 000 entries)', async () => {
    h = await createHarness({ entries: 20_000, seed: 2022 });
    const hist = h.sandbox.history;
    // In the middle of the history (it spans 2025), a second apart.
    for (const [i, text] of AWKWARD.entries())
      hist.insertRawText(text, { at: `2025-05-01T00:00:${String(i).padStart(2, '0')}Z` });
    // Served twice with two contents (conflicting_ids), and twice alike (a harmless duplicate).
    const served = hist.entries() as SandboxEntry[];
    hist.duplicate(served[5000]?.metadata?.id as string, { set: { requireToolApproval: false } });
    hist.insertRaw(served[7000], { at: served[7000]?.metadata?.createdAt as string });
    const backfill = await h.sync({ tenant: TENANT });
    expect(backfill.status).toBe('succeeded');
    expect(backfill.counters.entriesInserted).toBeGreaterThan(20_000);
    expect(backfill.counters.entriesRejected).toBe(3);

    // An incremental sync: new entries, and a rewrite of the checkpoint entry (inside its lookback window).
    hist.rewrite((hist.entries() as SandboxEntry[])[0]?.metadata?.id as string);
    hist.append(40);
    const sync = await h.sync({ tenant: TENANT });
    expect(sync.status).toBe('succeeded');
    expect(sync.counters.entriesChanged).toBe(1);

    // A reconcile: an entry the source no longer serves, and everything else matched.
    hist.remove((hist.entries() as SandboxEntry[])[12_000]?.metadata?.id as string);
    const reconcile = await reconcileTenant({
      database: h.database,
      config: h.config,
      logger: h.logger,
      tenant: h.tenant(TENANT),
      trigger: 'cli',
      alerting: createAlerting(h.config, h.logger, h.database),
    });
    expect(reconcile.status).toBe('succeeded');
    expect(reconcile.integrity?.entriesMissing).toBe(1);

    // The served digest (0041, after the fixture), left out of the digest above: every row has one,
    // the sha256 of exactly the bytes served, escapes and all.
    const digests = await h.database.withSession(async (s) => {
      const { rows } = await sql<{ entry_id: string; served_sha256: Buffer | null }>`
        select entry_id, served_sha256 from govtrail.history_entry`.execute(s);
      return new Map(rows.map((r) => [r.entry_id, r.served_sha256?.toString('hex') ?? null]));
    });
    expect([...digests.values()].filter((d) => d === null)).toEqual([]);
    for (const text of AWKWARD) {
      const id = /"id":"([^"]+)"/.exec(text)?.[1] as string;
      if (digests.has(id)) expect(digests.get(id), id).toBe(createHash('sha256').update(text).digest('hex'));
    }
    expect([...digests.keys()].filter((id) => id.startsWith('eq-')).length).toBe(5);

    const got = await h.database.withSession((s) => s.transaction().execute((trx) => digest(trx)));
    if (RECORD) writeFileSync(FIXTURE, `${JSON.stringify(got, null, 2)}\n`);
    const want = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, TableDigest>;
    expect(got).toEqual(want);
  }, 300_000);
});
