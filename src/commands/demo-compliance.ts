/**
 * The demo's last words (docs/design/conformance.md): the sandbox tenant judged by the shipped
 * recommended baseline — which controls it fails now and its % compliant over the last 90 days.
 */
import type { CommandContext } from '../app/context.js';
import type { Config } from '../config/settings.js';
import { packagePath } from '../runtime/paths.js';
import type { Database } from '../store/database.js';

/** The baseline file the demo applies: the shipped recommended one, unless one is configured for its tenant. */
export function demoBaselineConfig(config: Config, tenant: string): Config {
  if (config.baselinePath !== undefined || config.tenantBaselines[tenant] !== undefined) return config;
  return { ...config, baselinePath: packagePath('baselines', 'recommended.yaml') };
}

/** Prints which controls the tenant fails now and its % compliant over the last 90 days. */
export async function writeComplianceSummary(
  ctx: CommandContext,
  database: Database,
  tenant: string,
  baselineFile: string | undefined,
): Promise<void> {
  const { loadRulePack } = await import('../config/rule-pack.js');
  const { loadReportCompliance } = await import('../outputs/report/compliance-data.js');
  const { percent } = await import('../outputs/report/compliance-section.js');
  const now = new Date();
  const c = await loadReportCompliance(database.db, {
    tenantId: tenant,
    from: new Date(now.getTime() - 90 * 86_400_000),
    to: now,
    now,
    ranks: loadRulePack(ctx.config.alertRulesPath).ranks,
  });
  const { out } = ctx;
  if (c === undefined) {
    out.write(`\nNo baseline judged tenant "${tenant}": nothing to say about compliance.\n`);
    return;
  }
  const failing = c.controls.filter((x) => x.status === 'fail' || x.status === 'deleted');
  const compliant = c.share.pass + c.share.excepted;
  out.write(
    `\nCompliance of tenant "${tenant}" with baseline ${c.baseline.id} (${baselineFile ?? 'stored text'}, sha256 ${c.baseline.sha256.slice(0, 12)}…), every control judged at every instant of the history:\n`,
  );
  if (failing.length === 0) out.write(`  It meets all ${c.controls.length} controls now.\n`);
  else {
    out.write(`  It fails ${failing.length} of ${c.controls.length} controls now:\n`);
    for (const x of failing)
      out.write(
        `    ${x.id.padEnd(7)} ${x.title} — ${x.status === 'deleted' ? 'settings deleted' : `value ${x.value ?? 'unset'}`} since ${x.since ?? '?'}\n`,
      );
  }
  out.write(
    `  Over the last 90 days it was compliant ${percent(compliant)} of the time (failing ${percent(c.share.fail + c.share.deleted)}, ` +
      `excepted ${percent(c.share.excepted)}, unknown ${percent(c.share.unknown)}).\n`,
  );
}
