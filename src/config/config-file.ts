/**
 * The YAML file of GOVTRAIL_CONFIG: read and checked for its shape. Its `tenants:` list and
 * `groups:` map are read by tenants.ts, its `sinks:` list by the sink catalogue; its other top-level keys stand for
 * environment variables (`schedule:` → GOVTRAIL_SCHEDULE) and are defaults the environment overrides.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { describeYamlError } from '../core/yaml-error.js';

const yamlFileSchema = z
  .object({
    tenants: z.array(z.unknown()).min(1).optional(),
    sinks: z.array(z.unknown()).optional(),
    groups: z.record(z.string(), z.unknown()).optional(),
  })
  .catchall(z.union([z.string(), z.number(), z.boolean()]))
  .refine((doc) => doc.tenants !== undefined || doc.sinks !== undefined, {
    message: 'has neither a "tenants:" nor a "sinks:" list',
  });

/** The YAML file of GOVTRAIL_CONFIG, checked for its shape; its parts are read by the callers. */
export interface ConfigFile {
  readonly file: string;
  readonly tenants: readonly unknown[] | undefined;
  readonly sinks: readonly unknown[] | undefined;
  /** The `groups:` map (group name → its settings), read by tenants.ts. */
  readonly groups: Readonly<Record<string, unknown>> | undefined;
  /** Other top-level keys, as the environment variables they stand for. */
  readonly globals: Record<string, string>;
}

/** The environment variable a top-level key of the YAML file stands for (`schedule` → GOVTRAIL_SCHEDULE). */
export function fileKeyVariable(key: string): string {
  const k = key.toUpperCase();
  return k.startsWith('GOVTRAIL_') || k === 'DATABASE_URL' || k === 'LOG_LEVEL' ? k : `GOVTRAIL_${k}`;
}

/** The top-level keys of the YAML file, or [] when it cannot be read (loadConfig reports that). */
export function configFileKeys(file: string): string[] {
  try {
    const doc: unknown = parseYaml(readFileSync(file, 'utf8'));
    return doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? Object.keys(doc) : [];
  } catch {
    return [];
  }
}

export function readConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError('GOVTRAIL_CONFIG', `cannot read ${file}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: false });
  } catch (err) {
    // Position and reason only: the parser's excerpt of the file may show a password.
    throw new ConfigError('GOVTRAIL_CONFIG', `${file} is not valid YAML: ${describeYamlError(err, text)}`);
  }
  const parsed = yamlFileSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      'GOVTRAIL_CONFIG',
      `${file}: ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'} (expected a "tenants:" or "sinks:" list)`,
    );
  }
  const globals: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed.data)) {
    if (k === 'tenants' || k === 'sinks' || k === 'groups') continue;
    globals[fileKeyVariable(k)] = String(v);
  }
  return {
    file,
    tenants: parsed.data.tenants,
    sinks: parsed.data.sinks,
    groups: parsed.data.groups,
    globals,
  };
}
