/**
 * `govtrail owners delete …`: the DeleteEntitlementOwner remediation call (docs/design/tenant-api.md,
 * "DeleteEntitlementOwner"). Every call — dry runs too — is recorded in govtrail.owner_removal: a `sending`
 * row before the request is sent, then a row with its outcome (the table is INSERT-only).
 */
import { createInterface } from 'node:readline/promises';
import { Command } from 'commander';
import type { CommandContext } from '../app/context.js';
import type { TenantConfig } from '../config/settings.js';
import { ConfigError, GovtrailError, toGovtrailError } from '../core/errors.js';
import { type EntitlementOwnerRef, entitlementOwnerBody, entitlementOwnerPath } from '../source/owners.js';
import type { Database } from '../store/database.js';
import type { OwnerRemovalRecord } from '../store/write/owners.js';
import { ExitCode } from './exit.js';

interface DeleteOptions {
  app: string;
  resourceType: string;
  resource: string;
  role: string;
  entitlementApp: string;
  entitlement: string;
  tenant?: string;
  dryRun?: boolean;
  yes?: boolean;
}

/** Which flag carries each field, for messages that tell the user what to fix. */
const FLAG: Record<keyof EntitlementOwnerRef, string> = {
  appId: '--app',
  resourceTypeId: '--resource-type',
  resourceId: '--resource',
  roleSlug: '--role',
  entitlementAppId: '--entitlement-app',
  entitlementId: '--entitlement',
};

export function ownersCommand(): Command {
  const owners = new Command('owners').description('Remediation on app resource owners.');
  owners
    .command('delete')
    .description(
      'Remove one entitlement ownership source from an app resource (DeleteEntitlementOwner). ' +
        'Prints "deleted", "absent" (404: it was already gone) or the error; exits 0, 0 or 1. ' +
        'Every call, dry runs included, is recorded in govtrail.owner_removal: a "sending" row before the ' +
        'request is sent, then a row with its outcome; a "sending" row alone means the command was ' +
        'interrupted with the request in flight (check the tenant).\n\n' +
        'Asks for confirmation on a terminal unless --yes; without a terminal, --yes is required.',
    )
    .requiredOption('--app <id>', 'app id (path segment appId)')
    .requiredOption('--resource-type <id>', 'resource type id')
    .requiredOption('--resource <id>', 'resource id')
    .requiredOption('--role <slug>', 'owner role slug')
    .requiredOption('--entitlement-app <id>', 'app id of the entitlement that is the ownership source')
    .requiredOption('--entitlement <id>', 'id of that entitlement')
    .option('-t, --tenant <name>', 'the configured tenant to call (required when several are configured)')
    .option('--dry-run', 'print the request that would be sent, send nothing')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(deleteOwner);
  return owners;
}

/** `owners delete`: the request checked, confirmed, recorded, sent (or only shown with --dry-run). */
async function deleteOwner(opts: DeleteOptions): Promise<void> {
  const ref: EntitlementOwnerRef = {
    appId: opts.app,
    resourceTypeId: opts.resourceType,
    resourceId: opts.resource,
    roleSlug: opts.role,
    entitlementAppId: opts.entitlementApp,
    entitlementId: opts.entitlement,
  };
  const path = ownerPath(ref);
  const { createContext } = await import('../app/context.js');
  const ctx = createContext();
  const tenant = pickTenant(ctx.config.tenants, opts.tenant);
  if (opts.dryRun !== true && opts.yes !== true) await confirmDeletion(ref, tenant);

  const database = await ctx.openDatabase();
  try {
    const base = {
      tenantId: tenant.name,
      ...ref,
      dryRun: opts.dryRun === true,
    } satisfies Partial<OwnerRemovalRecord>;
    const { recordOwnerRemoval } = await import('../store/write/owners.js');
    if (opts.dryRun === true) {
      await recordOwnerRemoval(database.db, {
        ...base,
        outcome: 'dry_run',
        httpStatus: null,
        error: null,
      });
      ctx.out.write(
        `dry run: nothing was sent\nDELETE ${tenant.baseUrl}${path}\ncontent-type: application/json\n\n${entitlementOwnerBody(ref)}\n`,
      );
      return;
    }
    await sendDeletion(ctx, database, tenant, ref, base);
  } finally {
    await database.close();
  }
}

/** The request path of `ref`; an id it refuses is a USAGE error naming its flag. */
function ownerPath(ref: EntitlementOwnerRef): string {
  try {
    return entitlementOwnerPath(ref);
  } catch (err) {
    const field = (err as GovtrailError).details?.['field'] as keyof EntitlementOwnerRef | undefined;
    throw new GovtrailError(
      'USAGE',
      `${field !== undefined ? FLAG[field] : 'an id'}: ${(err as Error).message.replace(/^\w+ /, '')}`,
      { cause: err },
    );
  }
}

/** Asks on the terminal; no terminal, or no "y", ends the command with nothing sent. */
async function confirmDeletion(ref: EntitlementOwnerRef, tenant: TenantConfig): Promise<void> {
  const stdin = process.stdin as NodeJS.ReadStream;
  if (stdin.isTTY !== true) {
    throw new GovtrailError(
      'USAGE',
      'refusing to delete without --yes: stdin is not a terminal, so there is no one to confirm (add --yes, or --dry-run to see the request)',
    );
  }
  const confirmed = await confirm(
    `Delete owner ${JSON.stringify(ref.entitlementAppId)}/${JSON.stringify(ref.entitlementId)} ` +
      `(role ${JSON.stringify(ref.roleSlug)}) from resource ${JSON.stringify(ref.resourceId)} ` +
      `of app ${JSON.stringify(ref.appId)} on tenant ${tenant.name}? [y/N] `,
  );
  if (!confirmed) {
    process.stderr.write('not confirmed: nothing was sent\n');
    throw new ExitCode(1);
  }
}

/** Records the intent, sends the DELETE, records its outcome; exit 1 when it failed. */
async function sendDeletion(
  ctx: CommandContext,
  database: Database,
  tenant: TenantConfig,
  ref: EntitlementOwnerRef,
  base: Omit<OwnerRemovalRecord, 'outcome' | 'httpStatus' | 'error'>,
): Promise<void> {
  const { scrubSecrets } = await import('../runtime/logger.js');
  const { TenantApiClient } = await import('../source/client.js');
  const { recordOwnerRemoval } = await import('../store/write/owners.js');
  const client = new TenantApiClient({
    baseUrl: tenant.baseUrl,
    clientId: tenant.clientId,
    clientSecret: tenant.clientSecret,
    http: ctx.config.http,
    logger: ctx.logger.child({ tenant: tenant.name }),
  });
  // The intent first: a process killed while the DELETE is in flight (which the tenant may
  // well have carried out) still leaves a row, whose missing outcome says exactly that.
  await recordOwnerRemoval(database.db, { ...base, outcome: 'sending', httpStatus: null, error: null });
  let outcome: 'deleted' | 'absent';
  try {
    outcome = await client.deleteEntitlementOwner(ref);
  } catch (err) {
    const e = toGovtrailError(err);
    const message = scrubSecrets(`${e.code}: ${e.message}`).slice(0, 2000);
    await recordOwnerRemoval(database.db, {
      ...base,
      outcome: 'failed',
      httpStatus: e.status ?? null,
      error: message,
    });
    process.stderr.write(`govtrail: owner not deleted: ${message}\n`);
    throw new ExitCode(1);
  } finally {
    await client.close();
  }
  await recordOwnerRemoval(database.db, {
    ...base,
    outcome,
    httpStatus: outcome === 'absent' ? 404 : 200,
    error: null,
  });
  ctx.out.write(outcome === 'deleted' ? 'deleted\n' : 'absent: the owner was already gone (404)\n');
}

function pickTenant(tenants: readonly TenantConfig[], name: string | undefined): TenantConfig {
  if (tenants.length === 0) {
    throw new ConfigError(
      'GOVTRAIL_CLIENT_ID',
      'no tenant is configured: set GOVTRAIL_CLIENT_ID and GOVTRAIL_CLIENT_SECRET, or list tenants in GOVTRAIL_CONFIG',
    );
  }
  if (name === undefined) {
    if (tenants.length === 1) return tenants[0] as TenantConfig;
    throw new GovtrailError(
      'USAGE',
      `--tenant: several tenants are configured (${tenants.map((t) => t.name).join(', ')}); name one`,
    );
  }
  const t = tenants.find((x) => x.name === name);
  if (t === undefined) {
    throw new GovtrailError(
      'USAGE',
      `--tenant: no configured tenant is named ${JSON.stringify(name)}; configured: ${tenants.map((x) => x.name).join(', ')}`,
    );
  }
  return t;
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(question);
    return /^(y|yes)$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
