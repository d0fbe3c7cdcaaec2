/**
 * Reading a setting's text, shared by the settings (config/) and the sinks' own settings
 * (alerts/sinks/): pure, no environment or file access.
 */

/** A set of named settings as text: the environment, or a map standing in for it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** `v`, or undefined when it is unset or only blanks. */
export function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

/** Parses `15m`, `90s`, `1h30m`, `500ms`, `2d` or a bare number of seconds into milliseconds. */
export function parseDurationSetting(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let matched = 0;
  for (let m = re.exec(t); m !== null; m = re.exec(t)) {
    total += Number(m[1]) * (unit[m[2] as string] as number);
    matched = re.lastIndex;
  }
  return matched === t.length && t.length > 0 ? Math.round(total) : undefined;
}
