/**
 * Typos that the configuration would otherwise ignore in silence: a `GOVTRAIL_*` variable govtrail
 * does not read, and a top-level key of the GOVTRAIL_CONFIG file that stands for no setting
 * (`shedule:`). Each gives a warning naming it and, when one is close, the setting meant.
 *
 * The known names are not a second list to keep in step: they are the variables loadConfig looks
 * up, recorded while it loads a configuration with nothing set and one with an environment
 * tenant (whose keys it reads only then). A setting added to config/ is known here at once.
 */
import path from 'node:path';
import type { Env } from '../core/setting-values.js';
import { configFileKeys, fileKeyVariable } from './config-file.js';
import { readDotEnv } from './env.js';
import { type LoadConfigOptions, loadConfig } from './settings.js';

/** The variables loadConfig reads, whatever their values. */
export function knownVariables(): ReadonlySet<string> {
  const known = new Set<string>(['GOVTRAIL_CONFIG']);
  const onRead = (name: string) => {
    known.add(name);
  };
  const probes: Env[] = [
    {},
    {
      GOVTRAIL_CLIENT_ID: 'probe',
      GOVTRAIL_CLIENT_SECRET: 'probe',
      GOVTRAIL_TENANT_DOMAIN: 'probe.example',
    },
  ];
  for (const env of probes) loadConfig(env, { dotenv: false, onRead });
  return known;
}

/**
 * The warnings of a configuration that loads: unknown `GOVTRAIL_*` variables (environment and
 * `.env`) and unknown top-level keys of the GOVTRAIL_CONFIG file.
 */
export function configWarnings(processEnv: Env, options: LoadConfigOptions = {}): string[] {
  const cwd = options.cwd ?? process.cwd();
  const env: Env = { ...(options.dotenv === false ? {} : readDotEnv(cwd)), ...processEnv };
  const known = knownVariables();
  const warnings: string[] = [];
  const variables = [...known].filter((v) => v.startsWith('GOVTRAIL_'));
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('GOVTRAIL_') || known.has(name)) continue;
    warnings.push(`${name} is not a govtrail setting: ignored${suggestion(name, variables)}`);
  }
  const configFile = env['GOVTRAIL_CONFIG']?.trim();
  if (configFile) {
    const file = path.resolve(cwd, configFile);
    // A file key names a variable; the keys offered are the variables in the file's spelling.
    const fileKeys = [
      'tenants',
      'sinks',
      'groups',
      ...[...known].map((v) => (v.startsWith('GOVTRAIL_') ? v.slice('GOVTRAIL_'.length) : v).toLowerCase()),
    ];
    for (const key of configFileKeys(file)) {
      if (key === 'tenants' || key === 'sinks' || key === 'groups' || known.has(fileKeyVariable(key)))
        continue;
      warnings.push(`${file}: ${key}: not a setting: ignored${suggestion(key, fileKeys)}`);
    }
  }
  return warnings;
}

/** ` (did you mean X?)` for the closest candidate within a few edits, else ''. */
function suggestion(name: string, candidates: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  const tolerance = Math.max(2, Math.floor(name.length / 4));
  return best !== undefined && bestDistance <= tolerance ? ` (did you mean ${best}?)` : '';
}

/** Levenshtein distance: insertions, deletions and substitutions. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
