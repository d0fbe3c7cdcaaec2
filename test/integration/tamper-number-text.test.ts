/**
 * The chain is injective over number text (docs/design/integrity.md, "What govtrail verify
 * checks"): the row hash covers raw as JavaScript parses it, so an owner who respells a stored
 * number as another text of the same double (`4` → `4.0000000000000001`) reproduces every hash and
 * every anchor. verify also reads raw as PostgreSQL renders it and requires each number to be the
 * text govtrail writes for its value (core/normalise/number-text.ts), which this file checks
 * against PostgreSQL itself: a source that spells its numbers otherwise (`4.0`, `1E+21`, `-0`) is
 * stored in govtrail's spelling and verifies; the owner's respelling is TAMPERED, anchors or not.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { canonicalJsonbText } from '../../src/core/normalise/canonical.js';
import { canonicalNumberText, firstNonCanonicalNumber } from '../../src/core/normalise/number-text.js';
import { verifyStore } from '../../src/store/verify/verify.js';
import { runCliCaptured } from '../helpers/cli-process.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

if (process.env['CI']) fc.configureGlobal({ seed: 20_261_128 });

let h: Harness | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

const ID = '2NumbersNumbersNumbersNumbr';

/** An entry served with numbers in spellings govtrail does not write. */
const SERVED = `{"metadata":{"id":"${ID}","createdAt":"2030-01-01T00:00:00Z","changeKind":"CHANGE_KIND_PUT",
  "count":4,"revision":4.0,"big":1E+21,"tiny":1.5e-7,"zero":-0,"exact":0.1000000000000000055511151231257827,
  "note":"4.0 stays 4.0 in a string"},"snapshot":{"enabled":true,"requireToolApproval":true,"maxTools":4.0}}`;

function pem(key: KeyObject): string {
  return key.export(
    key.type === 'private' ? { type: 'pkcs8', format: 'pem' } : { type: 'spki', format: 'pem' },
  ) as string;
}

/** The CLI in-process (the helper the other CLI tests use), with its output as out/err. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await runCliCaptured(args, {});
  return { code: r.code, out: r.stdout, err: r.stderr };
}

/** A synced history holding SERVED, anchored; the CLI configured for it. */
async function anchoredWithNumbers(): Promise<{
  h: Harness;
  url: string;
  verify: () => ReturnType<typeof cli>;
}> {
  h = await createHarness({ entries: 40, seed: 29 });
  h.sandbox.history.insertRawText(SERVED.replaceAll('\n', ''));
  expect((await h.sync({ tenant: { pageSize: 50 } })).status).toBe('succeeded');
  const work = mkdtempSync(path.join(tmpdir(), 'govtrail-number-text-'));
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
  const anchors = path.join(work, 'anchors');
  expect((await cli('anchor', '--out', anchors)).code).toBe(0);
  return { h, url, verify: () => cli('verify', '--anchors', anchors, '--public-key', publicFile) };
}

/** Runs statements as a superuser with every trigger off, as an operator with database access could. */
async function asOwner<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('set session_replication_role = replica');
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function storedRaw(url: string): Promise<string> {
  return asOwner(url, async (c) => {
    const { rows } = await c.query(
      `select raw::text as raw from govtrail.history_entry where tenant_id = 'acme' and entry_id = $1`,
      [ID],
    );
    return rows[0].raw as string;
  });
}

describe.skipIf(!onServer)(`number text in stored raw (${NEEDS_SERVER})`, () => {
  it('jsonb stores exactly canonicalNumberText of every double govtrail writes', async () => {
    h = await createHarness({ entries: 1, seed: 29 });
    const values = [
      ...fc.sample(fc.double({ noNaN: true, noDefaultInfinity: true }), 5000),
      ...fc.sample(fc.integer(), 500),
      1e21,
      1e-7,
      5e-324,
      -0,
      2 ** 60,
      Number.MAX_VALUE,
    ];
    // As govtrail writes raw: canonical JSON, here one entry holding every value.
    const text = canonicalJsonbText({ values }).text;
    await asOwner(h.testDb.url as string, async (c) => {
      const { rows } = await c.query(
        'select $1::jsonb::text as stored, (select array_agg(v::text) from jsonb_array_elements($1::jsonb -> $2) v) as each',
        [text, 'values'],
      );
      expect(firstNonCanonicalNumber(rows[0].stored)).toBeUndefined();
      expect(rows[0].each).toEqual(values.map((v) => canonicalNumberText(v)));
    });
  });

  it("stores a source's own spellings in govtrail's, which verify accepts", async () => {
    const s = await anchoredWithNumbers();
    const raw = await storedRaw(s.url);
    expect(raw).toContain('"count": 4,');
    expect(raw).toContain('"revision": 4,');
    expect(raw).toContain('"big": 1000000000000000000000,');
    expect(raw).toContain('"tiny": 0.00000015,');
    expect(raw).toContain('"zero": 0');
    expect(raw).toContain('"exact": 0.1,');
    expect(raw).toContain('"note": "4.0 stays 4.0 in a string"');
    const ok = await s.verify();
    expect(ok.out).toContain('chain intact and every anchor reproduced');
    expect(ok.code).toBe(0);
  });

  it('an owner respelling a number of extra_fields or of a field change, values left equal, is TAMPERED', async () => {
    const s = await anchoredWithNumbers();
    await asOwner(s.url, async (c) => {
      const snap = await c.query(
        `update govtrail.settings_snapshot set extra_fields = '{"maxTools": 4.0}'::jsonb
          where tenant_id = 'acme' and entry_id = $1 and extra_fields::text = '{"maxTools": 4}'`,
        [ID],
      );
      expect(snap.rowCount).toBe(1);
      const change = await c.query(
        `update govtrail.field_change set new_value = '4.00'::jsonb
          where tenant_id = 'acme' and entry_id = $1 and field = 'extra_fields.maxTools' and new_value::text = '4'`,
        [ID],
      );
      expect(change.rowCount).toBe(1);
    });
    const r = await s.h.database.withSession((x) => verifyStore(x, { pageSize: 7 }));
    expect(r.findings).toEqual([
      expect.objectContaining({
        kind: 'column_mismatch',
        entryId: ID,
        detail: expect.stringContaining('settings_snapshot.extra_fields differs'),
      }),
      expect.objectContaining({
        kind: 'field_change_mismatch',
        entryId: ID,
        detail: expect.stringContaining(
          'field_change extra_fields.maxTools new_value $ is stored as 4.00, govtrail writes 4',
        ),
      }),
    ]);
  });

  it('an owner respelling raw 4 as 4.0000000000000001 is TAMPERED, naming the entry, path and texts', async () => {
    const s = await anchoredWithNumbers();
    const { seq } = await asOwner(s.url, async (c) => {
      const { rows } = await c.query(
        `update govtrail.history_entry
            set raw = replace(raw::text, '"count": 4,', '"count": 4.0000000000000001,')::jsonb
          where tenant_id = 'acme' and entry_id = $1 returning seq::text as seq`,
        [ID],
      );
      return rows[0] as { seq: string };
    });
    expect(await storedRaw(s.url)).toContain('"count": 4.0000000000000001,');
    const r = await s.h.database.withSession((x) => verifyStore(x, { pageSize: 7 }));
    expect(r.findings).toEqual([
      {
        tenantId: 'acme',
        kind: 'number_text_mismatch',
        seq: Number(seq),
        entryId: ID,
        detail: expect.stringContaining(
          'raw $.metadata.count is stored as 4.0000000000000001, govtrail writes 4',
        ),
      },
    ]);
    const cliResult = await s.verify();
    expect(cliResult.code).toBe(1);
    expect(cliResult.err + cliResult.out).toContain('TAMPERED');
    expect(cliResult.err + cliResult.out).toContain(`number_text_mismatch at tenant acme`);
    expect(cliResult.out).toContain(ID);
  });
});
