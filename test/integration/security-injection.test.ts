/**
 * Security checks beyond the sync invariants: loopback look-alikes are refused for plain http, in
 * the configuration and in the client; and hostile text (quotes, SQL, dollar quotes, backslashes,
 * unicode) in the tenant name and in entry values passes through a sync untouched — SQL is only
 * ever built with parameters.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/settings.js';
import { GovtrailError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { TenantApiClient } from '../../src/source/client.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness, testConfig } from '../helpers/harness.js';

// (`http://2130706433` is not here: the URL parser reads it as 127.0.0.1, which is loopback.)
const LOOKALIKES = [
  'http://localhost.evil.example',
  'http://127.0.0.1.nip.io',
  'http://127.0.0.1@evil.example',
  'http://evil.example\\@127.0.0.1',
  'http://[::ffff:8.8.8.8]',
  'http://0.0.0.0:8080',
  'http://10.0.0.1',
  'http://169.254.169.254',
];

describe('plain http only to loopback', () => {
  it.each(LOOKALIKES)('the configuration refuses %s', (baseUrl) => {
    expect(() =>
      loadConfig(
        { GOVTRAIL_BASE_URL: baseUrl, GOVTRAIL_CLIENT_ID: 'c', GOVTRAIL_CLIENT_SECRET: 's' },
        { dotenv: false },
      ),
    ).toThrow(/GOVTRAIL_BASE_URL/);
  });

  it.each(LOOKALIKES)('the client refuses %s before any request', (baseUrl) => {
    let caught: unknown;
    try {
      new TenantApiClient({
        baseUrl,
        clientId: 'c',
        clientSecret: 's',
        http: testConfig().http,
        logger: silentLogger,
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(GovtrailError);
    expect((caught as GovtrailError).code).toBe('INSECURE_URL');
  });
});

const HOSTILE = [
  `'; drop table govtrail.history_entry; --`,
  `$$; delete from govtrail.checkpoint; $$`,
  `$body$ ' " \\' \\\\ \\x00 \\n E'\\047'`,
  `Robert'); DROP TABLE students;--`,
  `' or '1'='1`,
  `%s %d {0} \${x} :1 $1 ?`,
  `ünïcödé — 日本語 — 🚨 — \u202e — \u200b`,
  `back\\slash\\\\double`,
];

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe.skipIf(!onServer)(`SQL is built with parameters only (${NEEDS_SERVER})`, () => {
  it('a hostile tenant name and hostile entry values are stored and read back byte-identical', async () => {
    h = await createHarness({ entries: 5, seed: 9 });
    const tenantName = HOSTILE.join(' | ');
    const added = HOSTILE.map((v, i) =>
      h?.sandbox.history.appendEntry({
        actor: { kind: 'ACTOR_KIND_API', userId: v },
        annotations: [
          { key: `k${i}`, kind: 'ANNOTATION_KIND_TICKET', rawValue: v, displayValue: v, displayLabel: v },
        ],
        set: { auditVerbosity: v },
        extraMetadata: { [v]: v },
      }),
    );
    const run = await h.sync({ tenant: { name: tenantName } });
    expect(run.status, run.error?.message).toBe('succeeded');
    const db = h.database.db;

    const tenants = await sql<{ tenant_id: string; n: number }>`
      select tenant_id, count(*)::int as n from govtrail.history_entry group by tenant_id`.execute(db);
    expect(tenants.rows).toEqual([{ tenant_id: tenantName, n: 5 + HOSTILE.length }]);
    const ck = await sql<{ tenant_id: string }>`select tenant_id from govtrail.checkpoint`.execute(db);
    expect(ck.rows.map((r) => r.tenant_id)).toEqual([tenantName]);

    for (const [i, v] of HOSTILE.entries()) {
      const id = (added[i] as { metadata: { id: string } }).metadata.id;
      const e = await sql<{ raw: unknown; actor_user_id: string }>`
        select raw, actor_user_id from govtrail.history_entry where tenant_id = ${tenantName} and entry_id = ${id}`.execute(
        db,
      );
      expect(e.rows[0]?.actor_user_id).toBe(v);
      expect(e.rows[0]?.raw).toEqual(JSON.parse(JSON.stringify(added[i])));
      const a = await sql<{ raw_value: string; display_value: string; display_label: string }>`
        select raw_value, display_value, display_label from govtrail.history_annotation
        where tenant_id = ${tenantName} and entry_id = ${id}`.execute(db);
      expect(a.rows).toEqual([{ raw_value: v, display_value: v, display_label: v }]);
      const s = await sql<{ audit_verbosity: string }>`
        select audit_verbosity from govtrail.settings_snapshot where tenant_id = ${tenantName} and entry_id = ${id}`.execute(
        db,
      );
      expect(s.rows[0]?.audit_verbosity).toBe(v);
    }

    // Every table is still there, and a second run is a no-op under the same hostile name.
    const again = await h.sync({ tenant: { name: tenantName } });
    expect(again.status).toBe('succeeded');
    expect(again.counters.entriesInserted).toBe(0);
    const runs = await sql<{ tenant_id: string }>`select distinct tenant_id from govtrail.sync_run`.execute(
      db,
    );
    expect(runs.rows.map((r) => r.tenant_id)).toEqual([tenantName]);
  });
});
