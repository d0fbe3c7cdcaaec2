/**
 * Issue 18, acceptance 3: two `govtrail worker` processes on 300 tenants (one YAML file, one
 * sandbox) with a 20-second schedule for two minutes, one SIGKILLed after the first slot. Prints,
 * from the run ledger: runs per tenant per slot, skipped rows, and the tenants synced after the kill.
 *
 * `npx tsx bench/fleet-acceptance.ts [--tenants 300] [--minutes 2]`
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createScratchDatabase, FAST_HTTP_ENV, ROOT, startSandboxProcess } from './lib.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

const TENANTS = Number(arg('--tenants') ?? 300);
const MINUTES = Number(arg('--minutes') ?? 2);
const SCHEDULE = '*/20 * * * * *';

const sandbox = await startSandboxProcess(['--entries', '5', '--seed', '18']);
const db = await createScratchDatabase('govtrail_accept');
const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-accept-'));
const config = path.join(dir, 'govtrail.yaml');
const lines = ['tenants:'];
for (let i = 0; i < TENANTS; i++) {
  lines.push(`  - name: acc-${String(i).padStart(4, '0')}`);
  lines.push(`    base_url: ${sandbox.baseUrl}`);
  lines.push(`    client_id: ${sandbox.clientId}`);
  lines.push(`    client_secret: ${sandbox.clientSecret}`);
}
writeFileSync(config, `${lines.join('\n')}\n`);
const env: NodeJS.ProcessEnv = {
  PATH: process.env['PATH'] ?? '',
  ...FAST_HTTP_ENV,
  DATABASE_URL: db.url,
  GOVTRAIL_CONFIG: config,
  GOVTRAIL_SCHEDULE: SCHEDULE,
  GOVTRAIL_RECONCILE_SCHEDULE: 'off',
  GOVTRAIL_HTTP_PORT: '0',
  LOG_LEVEL: 'warn',
};
const worker = (): ChildProcess =>
  spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker', '--no-initial-run'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
const started = Date.now();
const a = worker();
const b = worker();
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const count = async (text: string, values: unknown[] = []): Promise<number> =>
  (await client.query<{ n: number }>(text, values).catch(() => ({ rows: [{ n: 0 }] }))).rows[0]?.n ?? 0;

// Kill b after the first slot: 8 seconds into the second one, while it holds runs of that slot.
const first = await (async () => {
  for (;;) {
    const { rows } = await client
      .query<{ slot: Date }>('select min(slot) as slot from govtrail.sync_run where slot is not null')
      .catch(() => ({ rows: [] as Array<{ slot: Date }> }));
    if (rows[0]?.slot != null) return new Date(rows[0].slot);
    await new Promise((r) => setTimeout(r, 200));
  }
})();
const killAt = first.getTime() + 20_000 + 8_000;
await new Promise((r) => setTimeout(r, Math.max(0, killAt - Date.now())));
const killedAt = new Date();
b.kill('SIGKILL');
console.log(`first slot ${first.toISOString()}; replica b SIGKILLed at ${killedAt.toISOString()}`);
const until = started + MINUTES * 60_000;
await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now())));
// Let the slot in flight finish, then stop a.
await new Promise((r) => setTimeout(r, 15_000));
await new Promise<void>((resolve) => {
  a.once('exit', () => resolve());
  a.kill('SIGTERM');
});

const perSlot = await client.query<{
  slot: Date;
  tenants: number;
  runs: number;
  max_per_tenant: number;
  failed: number;
}>(
  `select slot, count(distinct tenant_id)::int as tenants, count(*)::int as runs,
          max(c)::int as max_per_tenant, sum(f)::int as failed
     from (select slot, tenant_id, count(*) as c, count(*) filter (where status = 'failed') as f
             from govtrail.sync_run where slot is not null group by slot, tenant_id) t
    group by slot order by slot`,
);
console.log('');
console.log('| slot (UTC) | tenants synced | runs | max runs per tenant | failed (killed in flight) |');
console.log('|---|---|---|---|---|');
for (const r of perSlot.rows) {
  console.log(
    `| ${new Date(r.slot).toISOString()} | ${r.tenants} | ${r.runs} | ${r.max_per_tenant} | ${r.failed} |`,
  );
}
const skipped = await count(`select count(*)::int as n from govtrail.sync_run where status = 'skipped'`);
const running = await count(`select count(*)::int as n from govtrail.sync_run where status = 'running'`);
const afterKill = await count(
  `select count(distinct tenant_id)::int as n from govtrail.sync_run where status = 'succeeded' and started_at > $1`,
  [killedAt.toISOString()],
);
const maxSucceeded = await count(
  `select coalesce(max(c), 0)::int as n from (select count(*) as c from govtrail.sync_run
     where status = 'succeeded' and slot is not null group by slot, tenant_id) t`,
);
console.log('');
console.log(`max successful runs per tenant per slot: ${maxSucceeded}`);
console.log(`skipped rows: ${skipped}`);
console.log(`runs left running: ${running}`);
console.log(`tenants synced after the kill: ${afterKill} of ${TENANTS}`);
console.log(
  JSON.stringify({
    acceptance: 3,
    tenants: TENANTS,
    slots: perSlot.rows.length,
    maxSucceededPerTenantSlot: maxSucceeded,
    skipped,
    running,
    tenantsAfterKill: afterKill,
  }),
);
await client.end();
await sandbox.close();
await db.drop();
rmSync(dir, { recursive: true, force: true });
