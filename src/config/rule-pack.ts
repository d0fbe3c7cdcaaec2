/**
 * Reading the rule pack from disk: the shipped rules/default-rules.yaml, extended or replaced by the
 * file GOVTRAIL_ALERT_RULES names. Parsing and evaluation are pure and live in src/core/rules/.
 */
import { readFileSync } from 'node:fs';
import { GovtrailError } from '../core/errors.js';
import { parseRulePack, type RulePack } from '../core/rules/rules.js';
import { packagePath } from '../runtime/paths.js';

/** Path of the shipped rule pack, from src/ (vitest, tsx) and from dist/src/ (the build) alike. */
export function defaultRulesPath(): string {
  return packagePath('rules', 'default-rules.yaml');
}

function readRuleFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new GovtrailError('RULES_INVALID', `${file}: cannot read the rule file: ${reason}`, { cause: err });
  }
}

/**
 * Loads the shipped pack, extended (or replaced) by the override file `GOVTRAIL_ALERT_RULES` names.
 * @throws GovtrailError `RULES_INVALID` naming the file, the rule and the key.
 */
export function loadRulePack(overridePath?: string): RulePack {
  const defaults = readRuleFile(defaultRulesPath());
  if (overridePath === undefined) return parseRulePack(defaults);
  return parseRulePack(defaults, readRuleFile(overridePath), overridePath);
}
