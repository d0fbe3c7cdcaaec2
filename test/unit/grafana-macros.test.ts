/**
 * The Grafana PostgreSQL macro expansion of test/helpers/grafana-macros.ts against the expansions
 * Grafana documents (and its macros.go produces), each macro with and without its alias form.
 */
import { describe, expect, it } from 'vitest';
import {
  expandGrafanaSql,
  expandMacros,
  formatInterval,
  goFloat,
  interpolateVariables,
  MacroError,
  parseInterval,
  rfc3339Nano,
} from '../helpers/grafana-macros.js';

const range = { from: new Date('2025-03-01T10:00:00Z'), to: new Date('2025-03-31T10:00:00.250Z') };
const FROM = "'2025-03-01T10:00:00Z'";
const TO = "'2025-03-31T10:00:00.25Z'";
const expand = (sql: string, extra: { intervalMs?: number; now?: Date } = {}) =>
  expandGrafanaSql(sql, { range, variables: { tenant: 'acme' }, ...extra });

describe('time range macros', () => {
  it('$__timeFilter(col) is an inclusive BETWEEN of RFC 3339 UTC instants', () => {
    expect(expand('where $__timeFilter(changed_at)').sql).toBe(`where changed_at BETWEEN ${FROM} AND ${TO}`);
  });

  it('$__timeFilter trims spaces around the column, as Grafana splits and trims arguments', () => {
    expect(expand('$__timeFilter( e.created_at )').sql).toBe(`e.created_at BETWEEN ${FROM} AND ${TO}`);
  });

  it('$__timeFrom() and $__timeTo() are quoted instants', () => {
    expect(expand('$__timeFrom() < $__timeTo()').sql).toBe(`${FROM} < ${TO}`);
  });

  it('$__unixEpochFrom() and $__unixEpochTo() are whole seconds', () => {
    expect(expand('$__unixEpochFrom()-$__unixEpochTo()').sql).toBe('1740823200-1743415200');
  });

  it('$__time and $__timeEpoch alias the column as "time"', () => {
    expect(expand('select $__time(valid_from)').sql).toBe('select valid_from AS "time"');
    expect(expand('select $__timeEpoch(valid_from)').sql).toBe(
      'select extract(epoch from valid_from) as "time"',
    );
  });

  it('$__unixEpochFilter compares seconds', () => {
    expect(expand('$__unixEpochFilter(ts)').sql).toBe('ts >= 1740823200 AND ts <= 1743415200');
  });
});

describe('$__timeGroup and $__timeGroupAlias', () => {
  it('$__timeGroup(col, interval) floors the epoch to the interval, without alias', () => {
    expect(expand("select $__timeGroup(changed_at, '1h') as t").sql).toBe(
      'select floor(extract(epoch from changed_at)/3600)*3600 as t',
    );
  });

  it('$__timeGroupAlias(col, interval) adds AS "time"', () => {
    expect(expand("select $__timeGroupAlias(changed_at, '5m')").sql).toBe(
      'select floor(extract(epoch from changed_at)/300)*300 AS "time"',
    );
  });

  it('accepts an unquoted interval and $__interval', () => {
    expect(expand('$__timeGroupAlias(changed_at, 1d)').sql).toBe(
      'floor(extract(epoch from changed_at)/86400)*86400 AS "time"',
    );
    expect(expand('$__timeGroupAlias(changed_at, $__interval)', { intervalMs: 3_600_000 }).sql).toBe(
      'floor(extract(epoch from changed_at)/3600)*3600 AS "time"',
    );
  });

  it('writes large and fractional intervals as Go does (exponent from 1e+06)', () => {
    expect(expand("$__timeGroup(x, '30d')").sql).toBe('floor(extract(epoch from x)/2.592e+06)*2.592e+06');
    expect(expand("$__timeGroup(x, '1w')").sql).toBe('floor(extract(epoch from x)/604800)*604800');
    expect(expand("$__timeGroup(x, '1500ms')").sql).toBe('floor(extract(epoch from x)/1.5)*1.5');
  });

  it('reads a $__timeGroup followed by a comma as the alias form (pre-5.3 compatibility)', () => {
    expect(expand("select $__timeGroup(changed_at, '1h'), count(*)").sql).toBe(
      'select floor(extract(epoch from changed_at)/3600)*3600 AS "time", count(*)',
    );
    // Inside a window ORDER BY it is followed by ")": no alias.
    expect(expand("over (order by $__timeGroup(changed_at, '1h'))").sql).toBe(
      'over (order by floor(extract(epoch from changed_at)/3600)*3600)',
    );
  });

  it('takes a fill argument without changing the SQL, with and without alias', () => {
    const plain = expand("$__timeGroup(changed_at, '1h', 0)");
    expect(plain.sql).toBe('floor(extract(epoch from changed_at)/3600)*3600');
    expect(plain.fill).toEqual({ mode: 'value', value: 0, intervalSeconds: 3600 });
    const aliased = expand("$__timeGroupAlias(changed_at, '1d', NULL)");
    expect(aliased.sql).toBe('floor(extract(epoch from changed_at)/86400)*86400 AS "time"');
    expect(aliased.fill).toEqual({ mode: 'null', intervalSeconds: 86400 });
    expect(expand("$__timeGroupAlias(changed_at, '1m', previous)").fill).toEqual({
      mode: 'previous',
      intervalSeconds: 60,
    });
    expect(expand("$__timeGroupAlias(changed_at, '1m', 2.5)").fill).toMatchObject({ value: 2.5 });
    expect(expand("$__timeGroupAlias(changed_at, '1m')").fill).toBeUndefined();
  });

  it('refuses a missing interval, a bad interval and a bad fill value, as Grafana does', () => {
    expect(() => expand('$__timeGroup(changed_at)')).toThrow(MacroError);
    expect(() => expand("$__timeGroup(changed_at, 'soon')")).toThrow(/error parsing interval/);
    expect(() => expand("$__timeGroup(changed_at, '300')")).toThrow(/error parsing interval/);
    expect(() => expand("$__timeGroup(changed_at, '1h', null)")).toThrow(/error parsing fill value null/);
  });

  it('has $__unixEpochGroup and its alias form', () => {
    expect(expand("$__unixEpochGroup(ts, '1h')").sql).toBe('floor((ts)/3600)*3600');
    expect(expand("$__unixEpochGroupAlias(ts, '1h')").sql).toBe('floor((ts)/3600)*3600 AS "time"');
  });

  it('refuses an unknown macro and a time macro without column', () => {
    expect(() => expand('$__timeFiltr(x)')).toThrow(/unknown macro "__timeFiltr"/);
    expect(() => expandMacros('$__time()', { range })).not.toThrow(); // Go splits "" into one empty argument
  });
});

describe('template variables', () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana variable syntax, not a template
  it('replaces $tenant, ${tenant} and [[tenant]], bare, with single quotes doubled', () => {
    const v = { range, variables: { tenant: "o'hara" } };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana variable syntax, not a template
    expect(interpolateVariables("t = '$tenant' or t = '${tenant}' or t = '[[tenant]]'", v)).toBe(
      "t = 'o''hara' or t = 'o''hara' or t = 'o''hara'",
    );
  });

  it('applies the raw, sqlstring and singlequote formats', () => {
    const v = { range, variables: { tenant: "o'hara" } };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana variable syntax, not a template
    expect(interpolateVariables('${tenant:raw} ${tenant:sqlstring} ${tenant:singlequote}', v)).toBe(
      "o'hara 'o''hara' 'o\\'hara'",
    );
  });

  it('quotes each value of a multi-value variable', () => {
    expect(
      interpolateVariables('tenant_id in ($tenant)', { range, variables: { tenant: ['a', "b'c"] } }),
    ).toBe("tenant_id in ('a','b''c')");
  });

  it('does not take a longer name for a variable, and leaves unknown names in place', () => {
    expect(interpolateVariables('$tenants $tenant_x $other', { range, variables: { tenant: 'a' } })).toBe(
      '$tenants $tenant_x $other',
    );
  });

  it('knows the built-ins $__interval, $__interval_ms, $__from and $__to', () => {
    expect(
      interpolateVariables('$__interval $__interval_ms $__from $__to', { range, intervalMs: 1_800_000 }),
    ).toBe('30m 1800000 1740823200000 1743415200250');
  });
});

describe('the formats Grafana uses', () => {
  it('formats intervals with the largest whole unit', () => {
    expect([86_400_000, 3_600_000, 1_800_000, 90_000, 1500, 20, 0].map(formatInterval)).toEqual([
      '1d',
      '1h',
      '30m',
      '1m',
      '1s',
      '20ms',
      '1ms',
    ]);
  });

  it('parses Go durations and calendar units', () => {
    const now = new Date('2025-02-01T00:00:00Z');
    expect(parseInterval('1h30m', now)).toBe(5_400_000);
    expect(parseInterval('1.5s', now)).toBe(1500);
    expect(parseInterval('2d', now)).toBe(172_800_000);
    expect(parseInterval('1M', now)).toBe(28 * 86_400_000); // February 2025
    expect(parseInterval('1y', now)).toBe(365 * 86_400_000);
    expect(() => parseInterval('1x', now)).toThrow(MacroError);
  });

  it('writes floats as Go %v does', () => {
    expect([86400, 604800, 1e6, 2_592_000, 1.5, 0.0001, 0.00001].map(goFloat)).toEqual([
      '86400',
      '604800',
      '1e+06',
      '2.592e+06',
      '1.5',
      '0.0001',
      '1e-05',
    ]);
  });

  it('writes instants as RFC 3339 with trailing zeros of the fraction dropped', () => {
    expect(rfc3339Nano(new Date('2025-01-01T00:00:00.000Z'))).toBe('2025-01-01T00:00:00Z');
    expect(rfc3339Nano(new Date('2025-01-01T00:00:00.120Z'))).toBe('2025-01-01T00:00:00.12Z');
  });
});
