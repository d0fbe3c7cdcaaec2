/**
 * Proof against govtrail's own database (docs/design/integrity.md): `govtrail anchor` signs each tenant's
 * chain head into a directory outside the database, and `govtrail verify --anchors DIR --public-key FILE`
 * exits 1 when the store no longer reproduces an anchor — the newest entries deleted, or an entry edited and
 * the chain recomputed after it, which a verify without anchors cannot tell. Edits to what analysts read
 * (typed columns, snapshots, annotations, field changes) fail with or without anchors. An altered anchor, or
 * one signed by another key, fails. Tampering runs as superuser with every trigger (and foreign key) switched
 * off, as an operator with database access could.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli.js';
import { contentHash, rowHash } from '../../src/core/normalise/canonical.js';
import { createRunAnchorer } from '../../src/outputs/anchor/after-run.js';
import { writeAnchor } from '../../src/outputs/anchor/anchor.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness, testConfig } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

function pem(key: KeyObject): string {
  return key.export(
    key.type === 'private' ? { type: 'pkcs8', format: 'pem' } : { type: 'spki', format: 'pem' },
  ) as string;
}

/** Runs the CLI in-process, capturing stdout and stderr. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  const spyErr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk));
    return true;
  });
  try {
    const code = await runCli(['node', 'govtrail', ...args]);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    spy.mockRestore();
    spyErr.mockRestore();
  }
}

interface Setup {
  readonly h: Harness;
  readonly url: string;
  readonly anchors: string;
  readonly publicKey: string;
  readonly work: string;
  /** Entries stored (and anchored). */
  readonly entries: number;
}

/**
 * A backfill, then 3 newer entries stored by a second run (the chain's tail), an anchor of that
 * state, and the public key in a file.
 */
async function anchored(): Promise<Setup> {
  h = await createHarness({ entries: 120, seed: 23, scenarios: true });
  expect((await h.sync({ tenant: { pageSize: 50 } })).status).toBe('succeeded');
  h.sandbox.history.append(3);
  const second = await h.sync({ tenant: { pageSize: 50 } });
  expect(second.counters.entriesInserted).toBe(3);
  const work = mkdtempSync(path.join(tmpdir(), 'govtrail-anchors-'));
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicFile = path.join(work, 'pub.pem');
  writeFileSync(publicFile, pem(publicKey));
  const url = h.testDb.url as string;
  vi.stubEnv('DATABASE_URL', url);
  vi.stubEnv('GOVTRAIL_BASE_URL', h.sandbox.baseUrl);
  vi.stubEnv('GOVTRAIL_CLIENT_ID', h.sandbox.credentials.secret.clientId);
  vi.stubEnv('GOVTRAIL_CLIENT_SECRET', h.sandbox.credentials.secret.clientSecret);
  vi.stubEnv('GOVTRAIL_TENANT', 'acme');
  vi.stubEnv('LOG_LEVEL', 'silent');
  vi.stubEnv('GOVTRAIL_ANCHOR_SIGNING_KEY', pem(privateKey));
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const anchors = path.join(work, 'anchors');
  const entries = h.sandbox.history.size;
  const made = await cli('anchor', '--out', anchors);
  expect(made.code).toBe(0);
  expect(made.out).toContain(`anchored acme: ${entries} entries`);
  return { h, url, anchors, publicKey: publicFile, work, entries };
}

/** Runs statements as superuser with every trigger and foreign key check off. */
async function tamper(url: string, fn: (c: pg.Client) => Promise<void>): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('set session_replication_role = replica');
    await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * A consistent forgery, as an operator with database access could make it: the actor of the first
 * entry at or after index `from` (in storage order) that has one is changed in raw and in the typed
 * column, and the chain recomputed from it on. Returns the entry's id.
 */
async function forgeActor(url: string, from: number): Promise<string> {
  let target = '';
  await tamper(url, async (c) => {
    const { rows } = await c.query(
      `select seq, entry_id, created_at_text, raw, row_hash from govtrail.history_entry
       where tenant_id = 'acme' order by seq`,
    );
    const at = rows.findIndex(
      (r, i) => i >= from && typeof r.raw.metadata?.actor === 'object' && r.raw.metadata.actor !== null,
    );
    expect(at).toBeGreaterThanOrEqual(0);
    target = rows[at].entry_id;
    rows[at].raw.metadata.actor.userId = 'someone-else';
    await c.query(
      `update govtrail.history_entry set raw = $2, actor_user_id = 'someone-else', content_sha256 = $3
       where tenant_id = 'acme' and entry_id = $1`,
      [target, JSON.stringify(rows[at].raw), contentHash(rows[at].raw)],
    );
    let prev: Buffer | null = at === 0 ? null : rows[at - 1].row_hash;
    for (const r of rows.slice(at)) {
      prev = rowHash(prev, {
        tenantId: 'acme',
        entryId: r.entry_id,
        createdAtText: r.created_at_text,
        raw: r.raw,
      });
      await c.query(
        `update govtrail.history_entry set row_hash = $2 where tenant_id = 'acme' and entry_id = $1`,
        [r.entry_id, prev],
      );
    }
  });
  return target;
}

function verifyWith(s: Setup, ...extra: string[]) {
  return cli('verify', '--anchors', s.anchors, '--public-key', s.publicKey, ...extra);
}

describe.skipIf(!onServer)(`govtrail anchor and verify --anchors (${NEEDS_SERVER})`, () => {
  it('an intact store reproduces its anchor; an anchor is never overwritten and names the one before', async () => {
    const s = await anchored();
    const ok = await verifyWith(s);
    expect(ok.out).toContain('against 1 of 1 anchor(s)');
    expect(ok.out).toContain('chain intact and every anchor reproduced');
    expect(ok.code).toBe(0);
    // A second anchor names the first by its sha256; verify checks both.
    expect((await cli('anchor', '--out', s.anchors)).code).toBe(0);
    const files = readdirSync(path.join(s.anchors, 'acme')).filter((f) => f.endsWith('.anchor.json'));
    expect(files).toHaveLength(2);
    const second = JSON.parse(readFileSync(path.join(s.anchors, 'acme', files[1] as string), 'utf8'));
    expect(second.previous_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await verifyWith(s)).code).toBe(0);
    // Without --tenant a tenant with nothing stored is a usage error (exit 2).
    expect((await cli('verify', '--tenant', 'nobody')).code).toBe(2);
  });

  it('the newest 3 entries deleted (the ledger fixed to match): exit 1 with anchors; without, it says it cannot tell', async () => {
    const s = await anchored();
    await tamper(s.url, async (c) => {
      const { rows } = await c.query(
        `select entry_id, run_id from govtrail.history_entry where tenant_id = 'acme' order by seq desc limit 3`,
      );
      const ids = rows.map((r) => r.entry_id);
      for (const t of ['field_change', 'history_annotation', 'settings_snapshot', 'history_entry'])
        await c.query(`delete from govtrail.${t} where tenant_id = 'acme' and entry_id = any($1)`, [ids]);
      await c.query(
        'update govtrail.sync_run set entries_inserted = entries_inserted - 3 where run_id = $1',
        [rows[0].run_id],
      );
    });
    const plain = await cli('verify');
    expect(plain.code).toBe(0);
    expect(plain.out).toContain('not proven without anchors: that no newest entries were deleted');
    const withAnchors = await verifyWith(s);
    expect(withAnchors.code).toBe(1);
    expect(withAnchors.out).toMatch(
      new RegExp(`anchor_mismatch: anchor acme/\\S+\\.anchor\\.json \\(${s.entries} entries`),
    );
    expect(withAnchors.out).toContain(
      `the store holds ${s.entries - 3} entries of the tenant, the anchor ${s.entries}`,
    );
  });

  it('a middle entry edited and the whole chain after it recomputed: exit 1 with anchors', async () => {
    const s = await anchored();
    await forgeActor(s.url, 60);
    // The chain in the database alone cannot tell.
    expect((await cli('verify')).code).toBe(0);
    const withAnchors = await verifyWith(s);
    expect(withAnchors.code).toBe(1);
    expect(withAnchors.out).toContain('anchor_mismatch');
    expect(withAnchors.out).toContain('an entry up to it was edited and the chain recomputed');
  });

  it('an edited actor_kind, snapshot column, annotation value or field change direction: exit 1 with or without anchors', async () => {
    const s = await anchored();
    const edits: Array<{ name: string; kind: string; forge: string; restore: string }> = [];
    await tamper(s.url, async (c) => {
      const entry = (
        await c.query(
          `select entry_id, actor_kind from govtrail.history_entry where tenant_id = 'acme' and actor_kind is not null order by seq offset 40 limit 1`,
        )
      ).rows[0];
      edits.push({
        name: 'actor_kind',
        kind: 'column_mismatch',
        forge: `update govtrail.history_entry set actor_kind = 'ACTOR_KIND_SYSTEM_FORGED' where tenant_id = 'acme' and entry_id = '${entry.entry_id}'`,
        restore: `update govtrail.history_entry set actor_kind = '${entry.actor_kind}' where tenant_id = 'acme' and entry_id = '${entry.entry_id}'`,
      });
      const snap = (
        await c.query(
          `select entry_id, require_tool_approval from govtrail.settings_snapshot where tenant_id = 'acme' and require_tool_approval is not null offset 30 limit 1`,
        )
      ).rows[0];
      edits.push({
        name: 'snapshot require_tool_approval',
        kind: 'column_mismatch',
        forge: `update govtrail.settings_snapshot set require_tool_approval = ${!snap.require_tool_approval} where tenant_id = 'acme' and entry_id = '${snap.entry_id}'`,
        restore: `update govtrail.settings_snapshot set require_tool_approval = ${snap.require_tool_approval} where tenant_id = 'acme' and entry_id = '${snap.entry_id}'`,
      });
      const ann = (
        await c.query(
          `select entry_id, ordinal, raw_value from govtrail.history_annotation where tenant_id = 'acme' and raw_value is not null limit 1`,
        )
      ).rows[0];
      edits.push({
        name: 'annotation raw_value',
        kind: 'annotation_mismatch',
        forge: `update govtrail.history_annotation set raw_value = 'JIRA-0000' where tenant_id = 'acme' and entry_id = '${ann.entry_id}' and ordinal = ${ann.ordinal}`,
        restore: `update govtrail.history_annotation set raw_value = $$${ann.raw_value}$$ where tenant_id = 'acme' and entry_id = '${ann.entry_id}' and ordinal = ${ann.ordinal}`,
      });
      const change = (
        await c.query(
          `select entry_id, field, direction from govtrail.field_change where tenant_id = 'acme' and direction = 'loosened' limit 1`,
        )
      ).rows[0];
      edits.push({
        name: 'field_change direction',
        kind: 'field_change_mismatch',
        forge: `update govtrail.field_change set direction = 'tightened' where tenant_id = 'acme' and entry_id = '${change.entry_id}' and field = '${change.field}'`,
        restore: `update govtrail.field_change set direction = 'loosened' where tenant_id = 'acme' and entry_id = '${change.entry_id}' and field = '${change.field}'`,
      });
    });
    expect(edits).toHaveLength(4);
    for (const edit of edits) {
      await tamper(s.url, async (c) => {
        await c.query(edit.forge);
      });
      const plain = await cli('verify');
      expect({ edit: edit.name, code: plain.code }).toEqual({ edit: edit.name, code: 1 });
      expect(plain.out).toContain(edit.kind);
      const withAnchors = await verifyWith(s);
      expect({ edit: edit.name, code: withAnchors.code }).toEqual({ edit: edit.name, code: 1 });
      expect(withAnchors.out).toContain(edit.kind);
      await tamper(s.url, async (c) => {
        await c.query(edit.restore);
      });
      expect((await cli('verify')).code).toBe(0);
    }
  });

  it('the evidence pack carries the newest anchor of the tenant and its public key', async () => {
    const s = await anchored();
    expect((await cli('anchor', '--out', s.anchors)).code).toBe(0);
    vi.stubEnv('GOVTRAIL_ANCHOR_DIR', s.anchors);
    const out = path.join(s.work, 'pack');
    const made = await cli(
      'export',
      'evidence-pack',
      '--from',
      '2000-01-01',
      '--to',
      '2100-01-01',
      '--out',
      out,
    );
    expect(made.code).toBe(0);
    const dir = path.join(s.anchors, 'acme');
    const newest = readdirSync(dir)
      .filter((f) => f.endsWith('.anchor.json'))
      .sort()
      .at(-1) as string;
    expect(readFileSync(path.join(out, 'anchor.json'))).toEqual(readFileSync(path.join(dir, newest)));
    expect(readFileSync(path.join(out, 'anchor.json.jws'), 'utf8')).toBe(
      readFileSync(path.join(dir, `${newest}.jws`), 'utf8'),
    );
    expect(readFileSync(path.join(out, 'anchor-public.pem'), 'utf8')).toBe(readFileSync(s.publicKey, 'utf8'));
    const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8'));
    expect(manifest.files.map((f: { name: string }) => f.name)).toEqual(
      expect.arrayContaining(['anchor.json', 'anchor.json.jws', 'anchor-public.pem']),
    );
    expect(readFileSync(path.join(out, 'README.txt'), 'utf8')).toContain('govtrail verify --anchors');
    expect((await cli('verify-pack', out, '--hashes-only')).code).toBe(0);
  });

  it('the worker anchors a tenant after every run that stored entries, and only then', async () => {
    h = await createHarness({ entries: 40, seed: 9 });
    const work = mkdtempSync(path.join(tmpdir(), 'govtrail-worker-anchors-'));
    const anchors = path.join(work, 'anchors');
    const { privateKey } = generateKeyPairSync('ed25519');
    const config = testConfig({ GOVTRAIL_ANCHOR_DIR: anchors, GOVTRAIL_ANCHOR_SIGNING_KEY: pem(privateKey) });
    const anchorer = createRunAnchorer(config, h.database, silentLogger);
    const files = () =>
      existsSync(path.join(anchors, 'acme'))
        ? readdirSync(path.join(anchors, 'acme')).filter((f) => f.endsWith('.anchor.json'))
        : [];
    const first = await h.sync();
    anchorer.onRun(first);
    await anchorer.idle();
    expect(files()).toHaveLength(1);
    // Nothing new: no anchor.
    const idle = await h.sync();
    expect(idle.counters.entriesInserted).toBe(0);
    anchorer.onRun(idle);
    await anchorer.idle();
    expect(files()).toHaveLength(1);
    h.sandbox.history.append(2);
    const next = await h.sync();
    anchorer.onRun(next);
    await anchorer.idle();
    expect(files()).toHaveLength(2);
    const newest = JSON.parse(readFileSync(path.join(anchors, 'acme', files().sort()[1] as string), 'utf8'));
    expect(newest.entries).toBe(h.sandbox.history.size);
    // Without a key, GOVTRAIL_ANCHOR_DIR is a configuration error at start-up.
    expect(() =>
      createRunAnchorer(testConfig({ GOVTRAIL_ANCHOR_DIR: anchors }), h?.database as never, silentLogger),
    ).toThrow(/GOVTRAIL_ANCHOR_SIGNING_KEY/);
  });

  it('an altered anchor, or one signed by another key, fails', async () => {
    const s = await anchored();
    const dir = path.join(s.anchors, 'acme');
    const file = path.join(dir, readdirSync(dir).find((f) => f.endsWith('.anchor.json')) as string);
    const original = readFileSync(file, 'utf8');
    // Made to agree with a store that lost its newest 3 entries: the signature no longer holds.
    writeFileSync(file, original.replace(`"entries": ${s.entries}`, `"entries": ${s.entries - 3}`));
    const altered = await verifyWith(s);
    expect(altered.code).toBe(1);
    expect(altered.out).toMatch(/anchor_invalid: anchor acme\/\S+ signature does not verify/);
    writeFileSync(file, original);
    expect((await verifyWith(s)).code).toBe(0);

    // A valid anchor by someone else's key (an attacker's own) is not trusted.
    const other = generateKeyPairSync('ed25519');
    vi.stubEnv('GOVTRAIL_ANCHOR_SIGNING_KEY', pem(other.privateKey));
    const foreign = path.join(s.work, 'foreign');
    expect((await cli('anchor', '--out', foreign)).code).toBe(0);
    const wrongKey = await cli('verify', '--anchors', foreign, '--public-key', s.publicKey);
    // Every anchor by one other key: a key mix-up as far as the verifier can tell, not tampering
    // of the store: exit 2 and say so, trusting none of them.
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.err).toMatch(
      /--public-key: every anchor under \S+ is signed by another key \(kid \S+\), not the one given/,
    );
    expect(wrongKey.out).not.toContain('TAMPERED');
    // One anchor by another key among anchors by the key given is what a forged anchor looks like.
    const mixed = path.join(s.work, 'mixed');
    cpSync(s.anchors, mixed, { recursive: true });
    for (const f of readdirSync(path.join(foreign, 'acme'))) {
      cpSync(path.join(foreign, 'acme', f), path.join(mixed, 'acme', f.replace(/^/, 'zz-')));
    }
    const forged = await cli('verify', '--anchors', mixed, '--public-key', s.publicKey);
    expect(forged.code).toBe(1);
    expect(forged.out).toContain('is signed by another key');
  });

  it('says per tenant what it proved: a tenant without anchors, and entries stored after the newest anchor', async () => {
    const s = await anchored();
    // globex: stored, never anchored.
    expect((await s.h.sync({ tenant: { name: 'globex' } })).status).toBe('succeeded');
    // acme: 4 entries after its anchor, one of them edited with the chain recomputed.
    s.h.sandbox.history.append(4);
    expect((await s.h.sync({ tenant: { pageSize: 50 } })).counters.entriesInserted).toBe(4);
    await forgeActor(s.url, s.entries);
    const text = await verifyWith(s);
    expect(text.code).toBe(0);
    expect(text.out).not.toContain('chain intact and every anchor reproduced\n');
    expect(text.out).toContain('some entries are not covered by an anchor');
    expect(text.out).toContain(
      `not proven: tenant "acme": the 4 entries stored after its newest anchor are protected by the chain alone`,
    );
    expect(text.out).toContain('not proven: tenant "globex" has no anchor');
    const json = JSON.parse((await verifyWith(s, '--json')).out);
    expect(json.fullyAnchored).toBe(false);
    expect(
      json.tenantProofs.map((p: { tenant: string; anchoredEntries: number }) => [
        p.tenant,
        p.anchoredEntries,
      ]),
    ).toEqual([
      ['acme', s.entries],
      ['globex', 0],
    ]);
  });

  it('follows a symbolic link to a tenant anchor directory, says so, and catches an edit inside the anchored range', async () => {
    const s = await anchored();
    const real = path.join(s.work, 'elsewhere');
    renameSync(path.join(s.anchors, 'acme'), real);
    symlinkSync(real, path.join(s.anchors, 'acme'));
    const intact = await verifyWith(s);
    expect(intact.code).toBe(0);
    expect(intact.out).toContain(
      'anchors: acme is a symbolic link to a directory: followed, its anchors checked',
    );
    expect(intact.out).toContain('chain intact and every anchor reproduced\n');
    await forgeActor(s.url, 60);
    const edited = await verifyWith(s);
    expect(edited.code).toBe(1);
    expect(edited.out).toContain('an entry up to it was edited and the chain recomputed');
    // Nothing of a tenant that fails is claimed as proven.
    expect(edited.out).toContain('proven: tenant "acme": nothing: it does not verify (TAMPERED above)');
    expect(edited.out).not.toContain('reproduce the newest');
  });

  it('orders anchors by their number, not their clock: replicas 2 minutes apart, and two at once, keep one chain', async () => {
    const s = await anchored();
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(s.publicKey, pem(createPublicKey(privateKey)));
    const dir = path.join(s.work, 'replicas');
    const database = s.h.database;
    const write = (now?: Date) =>
      database.withSession((db) =>
        writeAnchor(db, { dir, tenantId: 'acme', key: privateKey, ...(now ? { now } : {}) }),
      );
    const t = Date.now();
    await write(new Date(t));
    s.h.sandbox.history.append(1);
    await s.h.sync({ tenant: { pageSize: 50 } });
    // The second replica's clock is 2 minutes behind.
    await write(new Date(t - 120_000));
    // Two replicas anchoring at the same moment take turns in the database.
    await Promise.all([write(), write()]);
    // The turn is a lock in the database: while another session holds it, no anchor is written.
    const dirId = readFileSync(path.join(dir, '.govtrail-anchors'), 'utf8').trim();
    const holder = new pg.Client({ connectionString: s.url });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `govtrail anchor ${dirId} acme`,
    ]);
    let written = false;
    const waiting = write().then(() => {
      written = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(written).toBe(false);
    await holder.query('commit');
    await holder.end();
    await waiting;
    const verified = await cli('verify', '--anchors', dir, '--public-key', s.publicKey);
    expect(verified.out).toContain('chain intact and every anchor reproduced\n');
    expect(verified.code).toBe(0);
    const statements = readdirSync(path.join(dir, 'acme'))
      .filter((f) => f.endsWith('.anchor.json'))
      .map((f) => JSON.parse(readFileSync(path.join(dir, 'acme', f), 'utf8')).sequence)
      .sort();
    expect(statements).toEqual([1, 2, 3, 4, 5]);
  });

  it('notices that the oldest anchor was deleted', async () => {
    const s = await anchored();
    s.h.sandbox.history.append(2);
    await s.h.sync({ tenant: { pageSize: 50 } });
    expect((await cli('anchor', '--out', s.anchors)).code).toBe(0);
    const dir = path.join(s.anchors, 'acme');
    const oldest = readdirSync(dir)
      .filter((f) => f.endsWith('.anchor.json'))
      .sort()[0] as string;
    expect((await verifyWith(s)).code).toBe(0);
    rmSync(path.join(dir, oldest));
    rmSync(path.join(dir, `${oldest}.jws`));
    const deleted = await verifyWith(s);
    expect(deleted.code).toBe(1);
    expect(deleted.out).toContain(
      'is anchor number 2, but no anchor before it is here: the oldest 1 anchor(s) were deleted',
    );
  });
});
