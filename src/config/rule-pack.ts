/**
 * Reading the rule pack from disk: the shipped rules/default-rules.yaml, extended or replaced by the
 * file GOVTRAIL_ALERT_RULES names. Parsing and evaluation are pure and live in src/core/rules/.
 */
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GovtrailError } from '../core/errors.js';
import type { DefaultPack } from '../core/rules/pack-schema.js';
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

/** The build's copy of the shipped pack as data (scripts/bundle-vendor.mjs writes it). */
export function builtPackPath(): string {
  return packagePath('dist', 'vendor', 'default-rules.json');
}

/**
 * The shipped pack's YAML `text` as data, from the build's copy (`{ sha256, parsed }`) when that
 * copy was made from exactly this text; undefined otherwise (no build, or a text edited since),
 * and the text is parsed. Parsing the YAML is 47-52 ms of every command start that loads the
 * pack; reading the copy, well under one (bench/RESULTS.md (r)).
 */
export function builtPackData(text: string, file = builtPackPath()): DefaultPack | undefined {
  let copy: { sha256?: unknown; parsed?: unknown };
  try {
    copy = JSON.parse(readFileSync(file, 'utf8')) as { sha256?: unknown; parsed?: unknown };
  } catch {
    return undefined;
  }
  if (copy.sha256 !== hash('sha256', text, 'hex')) return undefined;
  return { parsed: copy.parsed };
}

/**
 * Loads the shipped pack, extended (or replaced) by the override file `GOVTRAIL_ALERT_RULES` names.
 * @throws GovtrailError `RULES_INVALID` naming the file, the rule and the key.
 */
export function loadRulePack(overridePath?: string): RulePack {
  const text = readRuleFile(defaultRulesPath());
  const defaults = builtPackData(text) ?? text;
  if (overridePath === undefined) return parseRulePack(defaults);
  return parseRulePack(defaults, readRuleFile(overridePath), overridePath);
}
