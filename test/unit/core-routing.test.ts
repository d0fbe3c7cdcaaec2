import { describe, expect, it } from 'vitest';
import { type RoutedSink, routeAllows, sinksFor } from '../../src/core/routing.js';

const HIGH = { severity: 'high', ruleId: 'AIGOV-002', tenantId: 'acme' } as const;
const LOW = { severity: 'low', ruleId: 'AIGOV-013', tenantId: 'acme' } as const;

describe('routeAllows', () => {
  it('lets everything through an empty route', () => {
    expect(routeAllows({}, HIGH)).toBe(true);
    expect(routeAllows({}, LOW)).toBe(true);
  });

  it('keeps alerts below the minimum severity out, and lets the minimum itself in', () => {
    expect(routeAllows({ minSeverity: 'high' }, HIGH)).toBe(true);
    expect(routeAllows({ minSeverity: 'high' }, LOW)).toBe(false);
    expect(routeAllows({ minSeverity: 'medium' }, { ...LOW, severity: 'medium' })).toBe(true);
    expect(routeAllows({ minSeverity: 'critical' }, HIGH)).toBe(false);
    expect(routeAllows({ minSeverity: 'low' }, LOW)).toBe(true);
  });

  it('lets only included rules in, and keeps excluded ones out even when included', () => {
    expect(routeAllows({ includeRules: ['AIGOV-002'] }, HIGH)).toBe(true);
    expect(routeAllows({ includeRules: ['AIGOV-002'] }, LOW)).toBe(false);
    expect(routeAllows({ excludeRules: ['AIGOV-013'] }, LOW)).toBe(false);
    expect(routeAllows({ excludeRules: ['AIGOV-013'] }, HIGH)).toBe(true);
    expect(routeAllows({ includeRules: ['AIGOV-013'], excludeRules: ['AIGOV-013'] }, LOW)).toBe(false);
  });

  it('lets only the listed tenants in', () => {
    expect(routeAllows({ tenants: ['acme'] }, HIGH)).toBe(true);
    expect(routeAllows({ tenants: ['globex'] }, HIGH)).toBe(false);
  });

  it('needs every filter to agree', () => {
    const route = { minSeverity: 'medium', includeRules: ['AIGOV-002'], tenants: ['acme'] } as const;
    expect(routeAllows(route, HIGH)).toBe(true);
    expect(routeAllows(route, { ...HIGH, tenantId: 'globex' })).toBe(false);
    expect(routeAllows(route, { ...HIGH, severity: 'low' })).toBe(false);
    expect(routeAllows(route, { ...HIGH, ruleId: 'AIGOV-003' })).toBe(false);
  });
});

describe('sinksFor', () => {
  it('names the sinks whose route allows the alert, in configuration order', () => {
    const sinks: RoutedSink[] = [
      { name: 'log', route: {} },
      { name: 'pd', route: { minSeverity: 'high' } },
      { name: 'teams', route: { excludeRules: ['AIGOV-013'] } },
      { name: 'globex-hook', route: { tenants: ['globex'] } },
    ];
    expect(sinksFor(sinks, HIGH)).toEqual(['log', 'pd', 'teams']);
    expect(sinksFor(sinks, LOW)).toEqual(['log']);
    expect(sinksFor(sinks, { ...LOW, tenantId: 'globex' })).toEqual(['log', 'globex-hook']);
  });
});
