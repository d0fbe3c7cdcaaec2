/**
 * Tamper evidence: `verifyStore` (behind `govtrail verify`) catches edits made by someone who
 * disabled the append-only triggers as superuser. Each case starts from a fresh synced database.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { rowHash } from '../../src/core/normalise/canonical.js';
import { verifyStore } from '../../src/store/verify/verify.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function synced(): Promise<{ h: Harness; url: string }> {
  h = await createHarness({ entries: 120, seed: 21, scenarios: true });
  const run = await h.sync({ tenant: { pageSize: 50 } });
  expect(run.status).toBe('succeeded');
  return { h, url: h.testDb.url as string };
}

/** Runs statements as superuser with the append-only triggers off. */
async function tamper(url: string, fn: (c: pg.Client) => Promise<void>): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (const t of ['history_entry', 'history_annotation', 'settings_snapshot'])
      await c.query(`alter table govtrail.${t} disable trigger user`);
    await fn(c);
    for (const t of ['history_entry', 'history_annotation', 'settings_snapshot'])
      await c.query(`alter table govtrail.${t} enable trigger user`);
  } finally {
    await c.end();
  }
}

async function middleRow(c: pg.Client): Promise<{ seq: string; entry_id: string }> {
  const { rows } = await c.query(
    `select seq::text as seq, entry_id from govtrail.history_entry where tenant_id = 'acme'
     order by history_entry.seq offset 60 limit 1`,
  );
  return rows[0];
}

describe.skipIf(!onServer)(`govtrail verify (${NEEDS_SERVER})`, () => {
  it('reports an intact store and how many rows it verified', async () => {
    const { h } = await synced();
    const r = await h.database.withSession((s) => verifyStore(s, { pageSize: 7 }));
    expect(r.findings).toEqual([]);
    expect(r.rowsVerified).toBe(h.sandbox.history.size);
  });

  it('catches an edited raw at the edited row', async () => {
    const { h, url } = await synced();
    let target = { seq: '', entry_id: '' };
    await tamper(url, async (c) => {
      target = await middleRow(c);
      await c.query(
        `update govtrail.history_entry set raw = jsonb_set(raw, '{metadata,actor,kind}', '"ACTOR_KIND_SYSTEM"')
         where tenant_id = 'acme' and entry_id = $1`,
        [target.entry_id],
      );
    });
    const r = await h.database.withSession((s) => verifyStore(s, { pageSize: 16 }));
    expect(r.findings[0]).toMatchObject({
      tenantId: 'acme',
      kind: 'hash_mismatch',
      seq: Number(target.seq),
      entryId: target.entry_id,
    });
  });

  it('catches an edited content hash, which would make reconcile report a rewrite that is none', async () => {
    const { h, url } = await synced();
    let target = { seq: '', entry_id: '' };
    await tamper(url, async (c) => {
      target = await middleRow(c);
      await c.query(
        `update govtrail.history_entry set content_sha256 = sha256('forged') where tenant_id = 'acme' and entry_id = $1`,
        [target.entry_id],
      );
    });
    const r = await h.database.withSession((s) => verifyStore(s, { pageSize: 16 }));
    expect(r.findings).toEqual([
      expect.objectContaining({
        kind: 'content_hash_mismatch',
        seq: Number(target.seq),
        entryId: target.entry_id,
      }),
    ]);
  });

  it('catches a deleted row as a missing predecessor of the next one', async () => {
    const { h, url } = await synced();
    let next = { seq: '', entry_id: '' };
    await tamper(url, async (c) => {
      const target = await middleRow(c);
      next = (
        await c.query(
          `select seq::text as seq, entry_id from govtrail.history_entry where tenant_id = 'acme' and seq > $1::bigint
           order by history_entry.seq limit 1`,
          [target.seq],
        )
      ).rows[0];
      // Other tables (field changes, alerts) reference the entry: a superuser switches off FK checks too.
      await c.query('set session_replication_role = replica');
      await c.query(`delete from govtrail.history_annotation where tenant_id = 'acme' and entry_id = $1`, [
        target.entry_id,
      ]);
      await c.query(`delete from govtrail.settings_snapshot where tenant_id = 'acme' and entry_id = $1`, [
        target.entry_id,
      ]);
      await c.query(`delete from govtrail.history_entry where tenant_id = 'acme' and entry_id = $1`, [
        target.entry_id,
      ]);
    });
    const r = await h.database.withSession((s) => verifyStore(s));
    expect(r.findings[0]).toMatchObject({
      kind: 'missing_predecessor',
      seq: Number(next.seq),
      entryId: next.entry_id,
    });
    // The run that stored it no longer has all its rows.
    expect(r.findings.some((f) => f.kind === 'run_count_mismatch')).toBe(true);
  });

  it('catches a forged row with a plausible hash of its own', async () => {
    const { h, url } = await synced();
    const forgedId = '2zzzzzzzzzzzzzzzzzzzzzzzzzz';
    await tamper(url, async (c) => {
      const { rows } = await c.query(
        `select raw, run_id from govtrail.history_entry where tenant_id = 'acme' order by seq desc limit 1`,
      );
      const raw = { ...rows[0].raw, metadata: { ...rows[0].raw.metadata, id: forgedId, annotations: [] } };
      delete raw.snapshot;
      // Hashed like govtrail would, but starting a chain of its own.
      const hash = rowHash(null, { tenantId: 'acme', entryId: forgedId, createdAtText: null, raw });
      await c.query(
        `insert into govtrail.history_entry (tenant_id, entry_id, created_at, created_at_text, raw, run_id, row_hash)
         values ('acme', $1, now(), null, $2, $3, $4)`,
        [forgedId, JSON.stringify(raw), rows[0].run_id, hash],
      );
    });
    const r = await h.database.withSession((s) => verifyStore(s));
    expect(r.findings[0]).toMatchObject({ kind: 'hash_mismatch', entryId: forgedId });
  });

  it('catches a forged row correctly chained onto the last one, by the run ledger', async () => {
    const { h, url } = await synced();
    const forgedId = '2zzzzzzzzzzzzzzzzzzzzzzzzzy';
    await tamper(url, async (c) => {
      const { rows } = await c.query(
        `select raw, run_id, row_hash from govtrail.history_entry where tenant_id = 'acme' order by seq desc limit 1`,
      );
      const raw = { ...rows[0].raw, metadata: { ...rows[0].raw.metadata, id: forgedId, annotations: [] } };
      delete raw.snapshot;
      const hash = rowHash(rows[0].row_hash, {
        tenantId: 'acme',
        entryId: forgedId,
        createdAtText: null,
        raw,
      });
      await c.query(
        `insert into govtrail.history_entry (tenant_id, entry_id, created_at, created_at_text, raw, run_id, row_hash)
         values ('acme', $1, now(), null, $2, $3, $4)`,
        [forgedId, JSON.stringify(raw), rows[0].run_id, hash],
      );
    });
    const r = await h.database.withSession((s) => verifyStore(s));
    // Its typed columns (left empty) do not say what its raw says either.
    expect(r.findings.map((f) => f.kind)).toEqual(['column_mismatch', 'run_count_mismatch']);
  });

  it('catches an edited annotation and a removed snapshot', async () => {
    const { h, url } = await synced();
    let annotated = '';
    let snapped = '';
    await tamper(url, async (c) => {
      annotated = (
        await c.query(`select entry_id from govtrail.history_annotation where tenant_id = 'acme' limit 1`)
      ).rows[0].entry_id;
      await c.query(
        `update govtrail.history_annotation set display_value = 'nothing to see' where tenant_id = 'acme' and entry_id = $1`,
        [annotated],
      );
      snapped = (
        await c.query(
          `select entry_id from govtrail.settings_snapshot where tenant_id = 'acme' and entry_id <> $1 limit 1`,
          [annotated],
        )
      ).rows[0].entry_id;
      await c.query(`delete from govtrail.settings_snapshot where tenant_id = 'acme' and entry_id = $1`, [
        snapped,
      ]);
    });
    const r = await h.database.withSession((s) => verifyStore(s));
    expect(r.findings.find((f) => f.entryId === annotated)?.kind).toBe('annotation_mismatch');
    expect(r.findings.find((f) => f.entryId === snapped)?.kind).toBe('snapshot_mismatch');
    // The chain itself is intact: only the child tables were touched.
    expect(r.findings.some((f) => f.kind === 'hash_mismatch' || f.kind === 'missing_predecessor')).toBe(
      false,
    );
  });
});
