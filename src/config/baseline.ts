/**
 * Which baseline judges a tenant, and reading a baseline file from disk. Parsing and validation are
 * pure and live in src/core/conformance/baseline.ts.
 *
 * A tenant is judged by its own `baseline:` in GOVTRAIL_CONFIG, else by the baseline of its group,
 * else by GOVTRAIL_BASELINE, else by none.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Baseline, parseBaseline } from '../core/conformance/baseline.js';
import type { Ranks } from '../core/diff.js';
import { ConfigError, GovtrailError } from '../core/errors.js';
import type { ConfigFile } from './config-file.js';

/**
 * The baseline file of one tenant: its own, else its groups' (they must agree), else the global
 * one. Pure: the caller passes the three sources; undefined when none sets one.
 * @throws ConfigError when the tenant's groups name different baselines and the tenant none.
 */
export function baselineFileFor(
  tenant: string,
  own: string | undefined,
  groups: readonly { readonly group: string; readonly baseline: string | undefined }[],
  global: string | undefined,
): string | undefined {
  if (own !== undefined) return own;
  const named = groups.filter((g) => g.baseline !== undefined);
  const distinct = [...new Set(named.map((g) => g.baseline))];
  if (distinct.length > 1) {
    throw new ConfigError(
      'GOVTRAIL_CONFIG',
      `tenant ${tenant}: its groups name different baselines (${named.map((g) => `${g.group}: ${g.baseline}`).join(', ')}): give the tenant its own baseline:`,
    );
  }
  return distinct[0] ?? global;
}

/**
 * The `baseline:` of each tenant of the GOVTRAIL_CONFIG file that sets one, resolved against the
 * file's folder, by tenant name (`name:`, else `tenant:`; tenants.ts has already refused a tenant
 * without a usable name).
 */
export function tenantBaselineFiles(doc: ConfigFile | undefined): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  if (doc?.tenants === undefined) return out;
  const dir = path.dirname(doc.file);
  for (const [i, raw] of doc.tenants.entries()) {
    if (typeof raw !== 'object' || raw === null) continue;
    const t = raw as Record<string, unknown>;
    const file = t['baseline'];
    if (file === undefined || file === null) continue;
    if (typeof file !== 'string' || file.trim() === '') {
      throw new ConfigError('GOVTRAIL_CONFIG', `${doc.file}: tenants[${i}].baseline: must be a file path`);
    }
    const name = t['name'] ?? t['tenant'];
    if (typeof name === 'string') out[name.trim()] = path.resolve(dir, file.trim());
  }
  return out;
}

/**
 * Reads and validates a baseline file.
 * @throws GovtrailError `BASELINE_INVALID`, one line `FILE:LINE: problem`.
 */
export function loadBaselineFile(file: string, ranks: Ranks): Baseline {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    throw new GovtrailError('BASELINE_INVALID', `${file}:1: cannot read the baseline file (${reason})`, {
      cause: err,
    });
  }
  return parseBaseline(text, file, ranks);
}
