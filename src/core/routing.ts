/**
 * Which sinks an alert goes to. Every configured sink carries a {@link SinkRoute}; the outbox asks
 * {@link sinksFor} once, when it stores the alert, and writes one `alert_delivery` row per sink
 * whose route allows it. A later change of the routes therefore affects new alerts only: what was
 * routed stays routed (and what was not is never sent). Pure.
 */
import { SEVERITIES, type Severity } from './alert.js';

/** A sink's filters. Every field is optional; an empty route lets every alert through. */
export interface SinkRoute {
  /** Only alerts of this severity or above. */
  readonly minSeverity?: Severity | undefined;
  /** Only these rule ids (before `excludeRules`). */
  readonly includeRules?: readonly string[] | undefined;
  /** Never these rule ids. */
  readonly excludeRules?: readonly string[] | undefined;
  /** Only alerts of these tenants (the tenant's name in the database). */
  readonly tenants?: readonly string[] | undefined;
}

/** A sink's name with its route: what the outbox needs at insert time. */
export interface RoutedSink {
  readonly name: string;
  readonly route: SinkRoute;
}

/** The facts of an alert a route looks at. */
export interface RoutableAlert {
  readonly severity: Severity;
  readonly ruleId: string;
  readonly tenantId: string;
}

/** True when `route` lets `alert` through. */
export function routeAllows(route: SinkRoute, alert: RoutableAlert): boolean {
  if (
    route.minSeverity !== undefined &&
    SEVERITIES.indexOf(alert.severity) < SEVERITIES.indexOf(route.minSeverity)
  ) {
    return false;
  }
  if (route.includeRules !== undefined && !route.includeRules.includes(alert.ruleId)) return false;
  if (route.excludeRules?.includes(alert.ruleId) === true) return false;
  if (route.tenants !== undefined && !route.tenants.includes(alert.tenantId)) return false;
  return true;
}

/** Names of the sinks whose route lets `alert` through, in configuration order. */
export function sinksFor(sinks: readonly RoutedSink[], alert: RoutableAlert): string[] {
  return sinks.filter((s) => routeAllows(s.route, alert)).map((s) => s.name);
}
