/**
 * Conformance composition (docs/design/conformance.md): which baseline judges each tenant, and the
 * data of `baseline check` and `baseline report`. Stored periods are used when they were judged by
 * the same baseline; otherwise (another file given with --baseline, or a configuration changed
 * since the last run) the tenant's history is judged in memory, without writing.
 */
import { baselineFileFor, loadBaselineFile } from '../config/baseline.js';
import { loadRulePack } from '../config/rule-pack.js';
import type { Config } from '../config/settings.js';
import type { Baseline } from '../core/conformance/baseline.js';
import { type ControlPeriod, HistoryJudge } from '../core/conformance/judge.js';
import { buildCheck, buildReport, type CheckJson, type ReportJson } from '../core/conformance/report.js';
import type { Ranks } from '../core/diff.js';
import { GovtrailError } from '../core/errors.js';
import type { Session } from '../store/database.js';
import { readSettingEntries, settingBounds, ticketsOf } from '../store/read/conformance-history.js';
import { judgedBaselineOf, previousCheck, readControlPeriods } from '../store/read/control-periods.js';
import { listTenants } from '../store/read/views.js';
import { recordBaselineText, recordCheck } from '../store/write/conformance.js';
import { storedTenants } from './select-tenants.js';

/**
 * The baseline file that judges `tenant` under the configuration: its own `baseline:`, else the
 * baseline its configured groups name (the `groups:` map), else GOVTRAIL_BASELINE.
 */
export function baselineFileOf(config: Config, tenant: string): string | undefined {
  const groups = config.tenants.find((t) => t.name === tenant)?.groups ?? [];
  return baselineFileFor(
    tenant,
    config.tenantBaselines[tenant],
    groups.map((group) => ({ group, baseline: config.groups.get(group)?.baseline })),
    config.baselinePath,
  );
}

/** Loads baseline files once each, validated against the configured rule pack's ranks. */
export class BaselineCache {
  readonly #byPath = new Map<string, Baseline>();
  readonly #config: Config;
  constructor(config: Config) {
    this.#config = config;
  }

  /** The baseline at `file`. @throws GovtrailError BASELINE_INVALID */
  load(file: string): Baseline {
    let b = this.#byPath.get(file);
    if (b === undefined) {
      b = loadBaselineFile(file, loadRulePack(this.#config.alertRulesPath).ranks);
      this.#byPath.set(file, b);
    }
    return b;
  }

  /** The file that judges `tenant` under the configuration, or undefined when none does. */
  fileFor(tenant: string): string | undefined {
    return baselineFileOf(this.#config, tenant);
  }

  /** The baseline that judges `tenant` (`override`, a --baseline file, wins); undefined when none. */
  forTenant(tenant: string, override?: string): Baseline | undefined {
    const file = override ?? this.fileFor(tenant);
    return file === undefined ? undefined : this.load(file);
  }
}

/**
 * The baseline that judges `tenant` under the configuration, read from its file now (a run takes
 * an edit of the file at its next start); undefined when none does.
 * @throws GovtrailError BASELINE_INVALID
 */
export function baselineFor(config: Config, tenant: string, ranks?: Ranks): Baseline | undefined {
  const file = baselineFileOf(config, tenant);
  if (file === undefined) return undefined;
  return loadBaselineFile(file, ranks ?? loadRulePack(config.alertRulesPath).ranks);
}

/** The stored tenants a command covers, each with its baseline; a USAGE error when none has one. */
export async function judgedTenants(
  db: Session,
  cache: BaselineCache,
  options: {
    readonly tenant?: string | undefined;
    readonly group?: string | undefined;
    readonly baseline?: string | undefined;
  },
): Promise<{ readonly tenant: string; readonly baseline: Baseline }[]> {
  const stored =
    options.group === undefined ? await listTenants(db) : await storedTenants(db, { group: options.group });
  if (options.tenant !== undefined && !stored.includes(options.tenant)) {
    throw new GovtrailError(
      'USAGE',
      `--tenant: no entries stored for tenant ${JSON.stringify(options.tenant)}`,
    );
  }
  const names = options.tenant !== undefined ? [options.tenant] : stored;
  if (names.length === 0) {
    throw new GovtrailError('USAGE', 'no history stored yet: run `govtrail sync` (or `govtrail demo`) first');
  }
  const out: { tenant: string; baseline: Baseline }[] = [];
  for (const tenant of names) {
    const baseline = cache.forTenant(tenant, options.baseline);
    if (baseline !== undefined) out.push({ tenant, baseline });
  }
  if (out.length === 0) {
    throw new GovtrailError(
      'USAGE',
      "no baseline judges these tenants: set GOVTRAIL_BASELINE, a tenant's baseline: in GOVTRAIL_CONFIG, or pass --baseline FILE",
    );
  }
  return out;
}

/** The periods of a tenant under `baseline`: stored when they were judged by it, else judged now in memory. */
export async function periodsOf(
  db: Session,
  tenant: string,
  baseline: Baseline,
  loadedAtKey: string,
  fromKey: string | null = null,
  toKey: string | null = null,
): Promise<{ readonly periods: ControlPeriod[]; readonly stored: boolean }> {
  const judged = await judgedBaselineOf(db, tenant);
  if (judged !== undefined && judged.id === baseline.id && judged.sha256 === baseline.sha256) {
    return { periods: await readControlPeriods(db, tenant, fromKey, toKey), stored: true };
  }
  const judge = new HistoryJudge(baseline, { tenant, loadedAtKey });
  await readSettingEntries(
    db,
    tenant,
    null,
    (page) => {
      for (const e of page) judge.push(e);
    },
    { fields: baseline.controls.map((c) => c.field.name) },
  );
  const periods = judge.finish();
  const tickets = await ticketsOf(db, tenant, [
    ...new Set(periods.flatMap((p) => (p.entryId === null ? [] : [p.entryId]))),
  ]);
  return {
    periods: periods.map((p) =>
      p.entryId !== null && tickets.has(p.entryId) ? { ...p, ticket: tickets.get(p.entryId) as string } : p,
    ),
    stored: false,
  };
}

/**
 * `baseline check` at `at` (a nanosecond key; `atMs` the same instant in milliseconds): the status
 * of every control of every tenant, what changed since the previous check, recorded for the next.
 */
export async function runCheck(
  db: Session,
  tenants: readonly { readonly tenant: string; readonly baseline: Baseline }[],
  at: string,
  atMs: number,
): Promise<CheckJson[]> {
  const byBaseline = new Map<string, { baseline: Baseline; tenants: string[] }>();
  for (const t of tenants) {
    const k = `${t.baseline.id} ${t.baseline.sha256}`;
    const g = byBaseline.get(k) ?? { baseline: t.baseline, tenants: [] };
    g.tenants.push(t.tenant);
    byBaseline.set(k, g);
  }
  const out: CheckJson[] = [];
  for (const { baseline, tenants: names } of byBaseline.values()) {
    const { firstLoadedKey } = await recordBaselineText(db, baseline);
    const inputs = [];
    for (const tenant of names) {
      const bounds = await settingBounds(db, tenant);
      const { periods } = await periodsOf(db, tenant, baseline, firstLoadedKey);
      const since = new Map<string, string>();
      for (const p of periods) {
        if (p.fromKey <= at && (p.toKey === null || at < p.toKey)) since.set(p.controlId, p.fromKey);
      }
      inputs.push({
        tenant,
        inForce: bounds !== undefined && bounds.latest.key <= at ? bounds.latest : undefined,
        since,
        previous: await previousCheck(db, tenant, baseline.id),
      });
    }
    const check = buildCheck(baseline, at, atMs, firstLoadedKey, inputs);
    for (const t of check.tenants) {
      await recordCheck(db, t.tenant, baseline, Object.fromEntries(t.controls.map((c) => [c.id, c.status])));
    }
    out.push(check);
  }
  return out;
}

/** `baseline report` over [fromKey, toKey), one document per baseline. */
export async function runReport(
  db: Session,
  tenants: readonly { readonly tenant: string; readonly baseline: Baseline }[],
  fromKey: string,
  toKey: string,
): Promise<ReportJson[]> {
  const byBaseline = new Map<
    string,
    { baseline: Baseline; tenants: { tenant: string; periods: ControlPeriod[] }[] }
  >();
  for (const t of tenants) {
    const { firstLoadedKey } = await recordBaselineText(db, t.baseline);
    const { periods } = await periodsOf(db, t.tenant, t.baseline, firstLoadedKey, fromKey, toKey);
    const k = `${t.baseline.id} ${t.baseline.sha256}`;
    const g = byBaseline.get(k) ?? { baseline: t.baseline, tenants: [] };
    g.tenants.push({ tenant: t.tenant, periods });
    byBaseline.set(k, g);
  }
  return [...byBaseline.values()].map((g) => buildReport(g.baseline, fromKey, toKey, g.tenants));
}
