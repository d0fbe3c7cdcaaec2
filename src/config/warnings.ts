/**
 * Typos that the configuration would otherwise ignore in silence: a `GOVTRAIL_*` variable govtrail
 * does not read, any other variable a letter or two away from one it reads (`DATABSE_URL`,
 * `GOVTAIL_BASE_URL`), and a top-level key of the GOVTRAIL_CONFIG file that stands for no setting
 * (`shedule:`). Each gives a warning naming it and, when one is close, the setting meant.
 *
 * The known names are not a second list to keep in step: they are the variables loadConfig looks
 * up, recorded while it loads a configuration with nothing set and one with an environment
 * tenant (whose keys it reads only then). A setting added to config/ is known here at once.
 */
import path from 'node:path';
import { closest, editDistance, suggestion } from '../core/did-you-mean.js';
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
  const variables = [...known];
  for (const name of Object.keys(env).sort()) {
    if (known.has(name) || env[name] === undefined) continue;
    if (name.startsWith('GOVTRAIL_') || looksLikeGovtrail(name)) {
      warnings.push(`${name} is not a govtrail setting: ignored${suggestion(name, variables)}`);
      continue;
    }
    // Another program's variable is none of govtrail's business, unless it is a near miss of one.
    const near = closest(name, variables, 2);
    if (near !== undefined) {
      warnings.push(`${name} is not a govtrail setting: ignored (did you mean ${near}?)`);
    }
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

/** A variable whose prefix is a misspelt `GOVTRAIL` (`GOVTAIL_`, `GOVTRIAL_`, `GOV_TRAIL_`). */
function looksLikeGovtrail(name: string): boolean {
  const prefix = /^([A-Za-z_]+?)_[A-Za-z]/.exec(name)?.[1];
  return prefix !== undefined && prefix.length >= 6 && editDistance(prefix.toUpperCase(), 'GOVTRAIL') <= 2;
}
