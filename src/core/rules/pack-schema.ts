/**
 * The rule file format: a small declarative condition vocabulary validated with zod. Rules are
 * data, never code — there is no expression language, no eval and no user JavaScript; every
 * condition is one of the keys of {@link ConditionSpec}, and every object is strict, so a typo is
 * an error that names the file, the rule and the key instead of a rule that silently never fires.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SEVERITIES, type Severity } from '../alert.js';
import { DIFFED_FIELDS, DIRECTIONS, type Direction, isDiffFieldName, type Ranks } from '../diff.js';
import { GovtrailError } from '../errors.js';
import { describeYamlError } from '../yaml-error.js';

/** Matches entries whose field_change rows include one that fits every given filter. */
export interface FieldChangedSpec {
  /** A field_change name (`require_tool_approval`, `extra_fields.x`); absent = any field. */
  readonly field?: string | undefined;
  readonly direction?: readonly Direction[] | undefined;
  /** The old value is one of these (deep equality; durations compare by seconds). */
  readonly from?: readonly unknown[] | undefined;
  /** The new value is one of these. */
  readonly to?: readonly unknown[] | undefined;
}

/**
 * One condition: an object with exactly one of these keys. Per-entry conditions combine with
 * `any_of`, `all_of` and `not`; the run-level ones (`backfill_digest`, `consecutive_failed_runs`)
 * may only be a rule's whole condition and are evaluated by the run-level functions.
 */
export interface ConditionSpec {
  readonly field_changed?: FieldChangedSpec | undefined;
  /** The entry's change kind is one of these. */
  readonly change_kind_in?: readonly string[] | undefined;
  /** The entry's actor kind is one of these. */
  readonly actor_kind_in?: readonly string[] | undefined;
  /** No annotation of `kind`, and none of the kinds in `unless_any`. */
  readonly annotation_missing?:
    | { readonly kind: string; readonly unless_any?: readonly string[] | undefined }
    | undefined;
  /** A change kind, actor kind, annotation kind or settings enum value not in this version's lists. */
  readonly unrecognised_values?: true | undefined;
  /**
   * The source disagrees with the store about this entry in one of these ways (docs/design/integrity.md):
   * evaluated on each new finding of a sync or reconcile, never on an entry's change.
   */
  readonly source_discrepancy?: { readonly kinds: readonly SourceDiscrepancyKind[] } | undefined;
  /** At least `count` entries of the tenant within `window` (`1h`, `30m`, `2d`) ending at this entry. */
  readonly entries_in_window?: { readonly count: number; readonly window: string } | undefined;
  readonly any_of?: readonly ConditionSpec[] | undefined;
  readonly all_of?: readonly ConditionSpec[] | undefined;
  readonly not?: ConditionSpec | undefined;
  /** Run-level: the first run of a tenant stored at least `min_entries` entries. */
  readonly backfill_digest?: { readonly min_entries: number } | undefined;
  /** Run-level: this many consecutive failed runs of a tenant. */
  readonly consecutive_failed_runs?: number | undefined;
}

/** The discrepancy kinds of docs/design/integrity.md. */
export const SOURCE_DISCREPANCY_KINDS = [
  'changed_at_source',
  'missing_at_source',
  'expired_at_source',
  'backdated',
  'conflicting_ids',
] as const;
export type SourceDiscrepancyKind = (typeof SOURCE_DISCREPANCY_KINDS)[number];

/** Condition keys evaluated by run-level functions rather than per entry. */
export const RUN_LEVEL_KEYS = ['backfill_digest', 'consecutive_failed_runs'] as const;
export type RunLevelKey = (typeof RUN_LEVEL_KEYS)[number];

export interface SeverityOverride {
  readonly when: ConditionSpec;
  readonly severity: Severity;
  /** Replaces the rule's title when this override applies. */
  readonly title?: string | undefined;
}

/** One validated rule. */
export interface Rule {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  readonly enabled: boolean;
  readonly severity: Severity;
  /** Human title of the alert; the humanised name when absent. */
  readonly title?: string | undefined;
  readonly condition: ConditionSpec;
  /** The first override whose `when` matches sets the severity (and title). */
  readonly severity_overrides?: readonly SeverityOverride[] | undefined;
  /** One line telling on-call what to do. */
  readonly runbook: string;
  /**
   * Repeats inside `window` of an open alert of this rule with the same values of `by` fold into
   * it as `repeated` events and are not delivered again (docs/design/alerts.md, "Suppression").
   */
  readonly suppress?: SuppressSpec | undefined;
  /** Tests of the rule, run by `govtrail rules test` (docs/design/alerts.md, "Rules as code"). */
  readonly tests?: readonly RuleTestSpec[] | undefined;
}

/** What makes two alerts of one rule "the same" for suppression and early lift of a snooze. */
export const SUPPRESS_SCOPE_KEYS = ['tenant', 'field', 'actor'] as const;
export type SuppressScopeKey = (typeof SUPPRESS_SCOPE_KEYS)[number];

/** `suppress: { window: 1h, by: [tenant, field] }`. */
export interface SuppressSpec {
  readonly window: string;
  readonly by: readonly SuppressScopeKey[];
}

/**
 * One test of a rule: an entry, given whole or as the settings before and after (with the change
 * kind, actor and annotations), or a run-level situation, and what must happen.
 */
export interface RuleTestSpec {
  readonly name: string;
  /** Wire settings (camelCase) before the change; absent for a tenant's first entry. */
  readonly before?: Readonly<Record<string, unknown>> | undefined;
  /** Wire settings after it; absent (null) for a hard delete. */
  readonly after?: Readonly<Record<string, unknown>> | null | undefined;
  /** The entry as the tenant API serves it (metadata, actor, annotations, snapshot), instead of after. */
  readonly entry?: Readonly<Record<string, unknown>> | undefined;
  readonly change_kind?: string | undefined;
  readonly actor_kind?: string | undefined;
  /** Annotation kinds the entry carries (`ANNOTATION_KIND_TICKET`, …). */
  readonly annotations?: readonly string[] | undefined;
  /** entries_in_window rules: how many entries of the tenant precede this one within the window. */
  readonly recent_entries?: number | undefined;
  /** Run-level rules: the run's situation. */
  readonly run?:
    | { readonly first_run_entries?: number; readonly consecutive_failed_runs?: number }
    | undefined;
  /** source_discrepancy rules: the kind of the finding. */
  readonly discrepancy?: string | undefined;
  readonly expect: { readonly fires: boolean; readonly severity?: Severity | undefined };
}

export interface RulePack {
  readonly rules: readonly Rule[];
  readonly ranks: Ranks;
}

const WINDOW = /^(?:\d+[smhd])+$/;
const WINDOW_PART = /(\d+)([smhd])/g;
const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds in a window such as `1h`, `90m`, `1h30m`; undefined when malformed or zero. */
export function parseWindowSeconds(text: string): number | undefined {
  if (!WINDOW.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(WINDOW_PART))
    total += Number(m[1]) * (UNIT_SECONDS[m[2] as string] as number);
  return total > 0 ? total : undefined;
}

const enumName = z.string().min(1);
const nonEmptyList = <T extends z.ZodType>(item: T) => z.array(item).min(1);

const FieldChangedSchema = z
  .object({
    field: z
      .string()
      .superRefine((field, ctx) => {
        if (!isDiffFieldName(field)) {
          ctx.addIssue({
            code: 'custom',
            message: `unknown field "${field}" (known: ${DIFFED_FIELDS.join(', ')}, or extra_fields.<wireName>)`,
          });
        }
      })
      .optional(),
    direction: nonEmptyList(z.enum(DIRECTIONS as [Direction, ...Direction[]])).optional(),
    from: nonEmptyList(z.unknown()).optional(),
    to: nonEmptyList(z.unknown()).optional(),
  })
  .strict();

const CONDITION_KEYS = [
  'field_changed',
  'change_kind_in',
  'actor_kind_in',
  'annotation_missing',
  'unrecognised_values',
  'source_discrepancy',
  'entries_in_window',
  'any_of',
  'all_of',
  'not',
  ...RUN_LEVEL_KEYS,
] as const;

const ConditionSchema: z.ZodType<ConditionSpec> = z.lazy(() =>
  z
    .object({
      field_changed: FieldChangedSchema.optional(),
      change_kind_in: nonEmptyList(enumName).optional(),
      actor_kind_in: nonEmptyList(enumName).optional(),
      annotation_missing: z
        .object({ kind: enumName, unless_any: z.array(enumName).optional() })
        .strict()
        .optional(),
      unrecognised_values: z.literal(true).optional(),
      source_discrepancy: z
        .object({
          kinds: nonEmptyList(
            z.enum(SOURCE_DISCREPANCY_KINDS, {
              message: `must be one of ${SOURCE_DISCREPANCY_KINDS.join(', ')}`,
            }),
          ),
        })
        .strict()
        .optional(),
      entries_in_window: z
        .object({
          count: z.number().int().min(2),
          window: z.string().refine((w) => parseWindowSeconds(w) !== undefined, {
            message: 'must be a duration such as 1h, 30m, 1h30m or 2d',
          }),
        })
        .strict()
        .optional(),
      any_of: nonEmptyList(ConditionSchema).optional(),
      all_of: nonEmptyList(ConditionSchema).optional(),
      not: ConditionSchema.optional(),
      backfill_digest: z
        .object({ min_entries: z.number().int().min(1) })
        .strict()
        .optional(),
      consecutive_failed_runs: z.number().int().min(1).optional(),
    })
    .strict()
    .superRefine((c, ctx) => {
      const present = CONDITION_KEYS.filter((k) => c[k] !== undefined);
      if (present.length === 0) {
        ctx.addIssue({ code: 'custom', message: `a condition needs one of: ${CONDITION_KEYS.join(', ')}` });
      } else if (present.length > 1) {
        ctx.addIssue({
          code: 'custom',
          message: `a condition has exactly one key, got ${present.join(', ')} (combine them with all_of)`,
        });
      }
    }),
);

const SeveritySchema = z.enum(SEVERITIES as [Severity, ...Severity[]]);

const RuleSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be letters, digits, ".", "_" or "-"'),
    name: z.string().min(1),
    version: z.number().int().min(1),
    enabled: z.boolean(),
    severity: SeveritySchema,
    title: z.string().min(1).optional(),
    condition: ConditionSchema,
    severity_overrides: z
      .array(
        z
          .object({ when: ConditionSchema, severity: SeveritySchema, title: z.string().min(1).optional() })
          .strict(),
      )
      .optional(),
    runbook: z.string().min(1),
    suppress: z
      .object({
        window: z.string().refine((w) => parseWindowSeconds(w) !== undefined, {
          message: 'must be a duration such as 1h, 30m, 1h30m or 2d',
        }),
        by: nonEmptyList(
          z.enum(SUPPRESS_SCOPE_KEYS, { message: `must be one of ${SUPPRESS_SCOPE_KEYS.join(', ')}` }),
        ),
      })
      .strict()
      .optional(),
    tests: z
      .array(
        z
          .object({
            name: z.string().min(1),
            before: z.record(z.string(), z.unknown()).optional(),
            after: z.record(z.string(), z.unknown()).nullable().optional(),
            entry: z.record(z.string(), z.unknown()).optional(),
            change_kind: enumName.optional(),
            actor_kind: enumName.optional(),
            annotations: z.array(enumName).optional(),
            recent_entries: z.number().int().min(0).optional(),
            run: z
              .object({
                first_run_entries: z.number().int().min(0).optional(),
                consecutive_failed_runs: z.number().int().min(0).optional(),
              })
              .strict()
              .optional(),
            discrepancy: z.enum(SOURCE_DISCREPANCY_KINDS).optional(),
            expect: z.object({ fires: z.boolean(), severity: SeveritySchema.optional() }).strict(),
          })
          .strict(),
      )
      .optional(),
  })
  .strict();

/** An override entry for an existing rule: any rule key but `id` may be left out. */
const RulePatchSchema = RuleSchema.partial().required({ id: true });

const rankList = z
  .array(enumName)
  .min(1)
  .refine((l) => new Set(l).size === l.length, { message: 'lists a value twice' });

const RanksSchema = z.object({ auditVerbosity: rankList, defaultToolClassification: rankList }).strict();

const DefaultDocSchema = z.object({ ranks: RanksSchema, rules: z.array(z.unknown()) }).strict();

const OverrideDocSchema = z
  .object({
    replace: z.boolean().optional(),
    ranks: RanksSchema.partial().optional(),
    rules: z.array(z.unknown()).optional(),
  })
  .strict();

/** Throws RULES_INVALID naming the file, the rule (when known) and the offending key. */
function fail(file: string, where: string | undefined, message: string): never {
  throw new GovtrailError('RULES_INVALID', `${file}: ${where === undefined ? '' : `${where}: `}${message}`);
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  return out;
}

function issueText(issue: z.core.$ZodIssue): string {
  const at = formatPath(issue.path);
  const prefix = at === '' ? '' : `${at}: `;
  switch (issue.code) {
    case 'unrecognized_keys':
      return `${prefix}unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_value':
      return `${prefix}must be one of ${issue.values.map((v) => String(v)).join(', ')} (got ${JSON.stringify(issue.input)})`;
    case 'invalid_type':
      if (issue.input === undefined) return `${prefix}is required`;
      return `${prefix}expected ${issue.expected}, got ${JSON.stringify(issue.input)}`;
    default:
      return `${prefix}${issue.message}`;
  }
}

function validate<T>(schema: z.ZodType<T>, value: unknown, file: string, where: string | undefined): T {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const first = result.error.issues[0];
  return fail(file, where, first === undefined ? 'invalid' : issueText(first));
}

function ruleLabel(raw: unknown, index: number): string {
  const id = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)['id'] : undefined;
  return typeof id === 'string' && id !== '' ? `rule ${id}` : `rules[${index}]`;
}

/** Rejects run-level conditions anywhere but at the top of a rule's condition. */
function checkRunLevelPlacement(rule: Rule, file: string): void {
  const walk = (c: ConditionSpec, path: string, top: boolean): void => {
    for (const k of RUN_LEVEL_KEYS) {
      if (c[k] !== undefined && !top) {
        fail(file, `rule ${rule.id}`, `${path}: ${k} is run-level and can only be a rule's whole condition`);
      }
    }
    c.any_of?.forEach((s, i) => {
      walk(s, `${path}.any_of[${i}]`, false);
    });
    c.all_of?.forEach((s, i) => {
      walk(s, `${path}.all_of[${i}]`, false);
    });
    if (c.not !== undefined) walk(c.not, `${path}.not`, false);
  };
  walk(rule.condition, 'condition', true);
  const runLevel = RUN_LEVEL_KEYS.some((k) => rule.condition[k] !== undefined);
  if (runLevel && rule.severity_overrides !== undefined) {
    fail(file, `rule ${rule.id}`, 'severity_overrides: a run-level rule has no entry to test them against');
  }
  rule.severity_overrides?.forEach((o, i) => {
    walk(o.when, `severity_overrides[${i}].when`, false);
  });
}

function parseYamlDoc(text: string, file: string): unknown {
  try {
    return parseYaml(text, { prettyErrors: false, uniqueKeys: true });
  } catch (err) {
    return fail(file, undefined, `not valid YAML: ${describeYamlError(err, text)}`);
  }
}

function completeRule(raw: unknown, file: string, label: string): Rule {
  const rule = validate(RuleSchema, raw, file, label) as Rule;
  checkRunLevelPlacement(rule, file);
  return rule;
}

/**
 * The shipped pack: its YAML text, or that text already parsed into data (the build's copy,
 * config/rule-pack.ts), which is validated all the same.
 */
export type DefaultPack = string | { readonly parsed: unknown };

/**
 * Parses the shipped pack and an optional override (pure). Override semantics: an entry whose id
 * exists patches that rule key by key (a given `condition` replaces the condition whole, so a
 * parameter change restates it); a new id adds a complete rule; `ranks` replaces each list it
 * gives; `replace: true` drops the shipped rules and keeps only the override's.
 * @throws GovtrailError `RULES_INVALID`, message `<file>: rule <id>: <key path>: <problem>`.
 */
export function parseRulePack(
  defaults: DefaultPack,
  overrideYaml?: string,
  overrideName = 'override',
): RulePack {
  const defaultName = 'default-rules.yaml';
  const data = typeof defaults === 'string' ? parseYamlDoc(defaults, defaultName) : defaults.parsed;
  const doc = validate(DefaultDocSchema, data, defaultName, undefined);
  const rules = new Map<string, Rule>();
  doc.rules.forEach((raw, i) => {
    const label = ruleLabel(raw, i);
    const rule = completeRule(raw, defaultName, label);
    if (rules.has(rule.id)) fail(defaultName, label, 'id used twice');
    rules.set(rule.id, rule);
  });
  let ranks: Ranks = doc.ranks;
  if (overrideYaml === undefined) return freezePack([...rules.values()], ranks);

  const parsed = parseYamlDoc(overrideYaml, overrideName);
  // An empty file (or one holding only comments) changes nothing.
  const override = validate(OverrideDocSchema, parsed ?? {}, overrideName, undefined);
  if (override.replace === true) rules.clear();
  if (override.ranks !== undefined) {
    ranks = {
      auditVerbosity: override.ranks.auditVerbosity ?? ranks.auditVerbosity,
      defaultToolClassification: override.ranks.defaultToolClassification ?? ranks.defaultToolClassification,
    };
  }
  const seen = new Set<string>();
  (override.rules ?? []).forEach((raw, i) => {
    const label = ruleLabel(raw, i);
    const patch = validate(RulePatchSchema, raw, overrideName, label);
    if (seen.has(patch.id)) fail(overrideName, label, 'id used twice');
    seen.add(patch.id);
    const existing = rules.get(patch.id);
    const merged = existing === undefined ? raw : { ...existing, ...stripUndefined(patch) };
    rules.set(patch.id, completeRule(merged, overrideName, label));
  });
  return freezePack([...rules.values()], ranks);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function freezePack(rules: Rule[], ranks: Ranks): RulePack {
  return Object.freeze({
    rules: Object.freeze(rules),
    ranks: Object.freeze({
      auditVerbosity: Object.freeze([...ranks.auditVerbosity]),
      defaultToolClassification: Object.freeze([...ranks.defaultToolClassification]),
    }),
  });
}
