/**
 * Entitlement owners of app resources, for DeleteEntitlementOwner (docs/design/tenant-api.md,
 * "DeleteEntitlementOwner").
 *
 * The seeded owners are awkward on purpose: ids containing `/`, `%`, `?`, `#`, `+`, `&`,
 * spaces, non-ASCII text and text that already looks percent-encoded. Only a client that
 * percent-encodes every path segment exactly once can address them.
 */
import { ksuidAt } from './ksuid.js';
import { Random } from './random.js';

/** One entitlement ownership source of an app resource, under a role. */
export interface OwnerTuple {
  readonly appId: string;
  readonly resourceTypeId: string;
  readonly resourceId: string;
  readonly roleSlug: string;
  readonly entitlementAppId: string;
  readonly entitlementId: string;
}

/** The owner set of the sandbox tenant. */
export interface SandboxOwners {
  has(tuple: OwnerTuple): boolean;
  add(tuple: OwnerTuple): void;
  /** Every owner, in insertion order. */
  list(): OwnerTuple[];
}

const FIELDS = [
  'appId',
  'resourceTypeId',
  'resourceId',
  'roleSlug',
  'entitlementAppId',
  'entitlementId',
] as const;

function keyOf(t: OwnerTuple): string {
  return JSON.stringify(FIELDS.map((f) => t[f]));
}

/** Checks a tuple from an untrusted source; throws a RangeError. */
export function validateOwner(value: unknown): OwnerTuple {
  if (typeof value !== 'object' || value === null) throw new RangeError('an owner is an object');
  const v = value as Record<string, unknown>;
  for (const f of FIELDS) {
    if (typeof v[f] !== 'string' || v[f] === '')
      throw new RangeError(`owner: ${f} must be a non-empty string`);
  }
  return Object.fromEntries(FIELDS.map((f) => [f, v[f]])) as unknown as OwnerTuple;
}

/** Realistic owners, several of them hard to put in a URL. */
export function seededOwners(): OwnerTuple[] {
  const rng = new Random(0x0e7e5);
  const id = (): string => ksuidAt(1_690_000_000 + rng.int(0, 40_000_000), rng.bytes(16));
  const github = id();
  const okta = id();
  const snowflake = id();
  const confluence = id();
  return [
    {
      appId: github,
      resourceTypeId: 'repository',
      resourceId: 'acme/platform-api',
      roleSlug: 'admin',
      entitlementAppId: okta,
      entitlementId: id(),
    },
    {
      appId: github,
      resourceTypeId: 'team',
      resourceId: 'platform',
      roleSlug: 'org/admins',
      entitlementAppId: github,
      entitlementId: 'team:platform/maintainers',
    },
    {
      appId: snowflake,
      resourceTypeId: 'database',
      resourceId: 'Finance Q3 100% ready? #1',
      roleSlug: 'owner',
      entitlementAppId: okta,
      entitlementId: 'group:Finance & Ops #2?',
    },
    {
      appId: confluence,
      resourceTypeId: '日本-space',
      resourceId: 'Müller-Lüdenscheidt Ärger',
      roleSlug: 'space-admin',
      entitlementAppId: okta,
      entitlementId: 'ü/日本 チーム',
    },
    {
      appId: snowflake,
      resourceTypeId: 'schema',
      resourceId: 'a+b=c;d,e',
      roleSlug: 'usage+read',
      entitlementAppId: snowflake,
      entitlementId: 'role:ANALYST+',
    },
    {
      appId: confluence,
      resourceTypeId: 'page',
      resourceId: 'reports/2025 Q1',
      roleSlug: 'viewer',
      entitlementAppId: okta,
      entitlementId: '%2F already encoded',
    },
  ];
}

/** A set of owner tuples. */
export class OwnerStore implements SandboxOwners {
  private readonly owners = new Map<string, OwnerTuple>();

  constructor(initial: readonly OwnerTuple[]) {
    for (const t of initial) this.add(t);
  }

  has(tuple: OwnerTuple): boolean {
    return this.owners.has(keyOf(tuple));
  }

  add(tuple: OwnerTuple): void {
    const copy = validateOwner(tuple);
    this.owners.set(keyOf(copy), copy);
  }

  list(): OwnerTuple[] {
    return [...this.owners.values()];
  }

  /** Removes an owner; false when it was not there. */
  remove(tuple: OwnerTuple): boolean {
    return this.owners.delete(keyOf(tuple));
  }
}

/** Outcome of matching a raw request path against the delete route. */
export type OwnerPathMatch =
  | { readonly match: 'none' }
  | { readonly match: 'bad'; readonly message: string }
  | { readonly match: 'ok'; readonly owner: OwnerTuple };

const ROUTE = [
  '',
  'api',
  'v2',
  'apps',
  null,
  'resource_types',
  null,
  'resources',
  null,
  'owners',
  'entitlements',
  null,
  null,
  null,
];

/**
 * Matches `/api/v2/apps/{app_id}/resource_types/{resource_type_id}/resources/{resource_id}/owners/entitlements/{role_slug}/{app_entitlement_ref_app_id}/{app_entitlement_ref_id}`
 * on the raw path: split on `/` first, then percent-decode each segment, so an encoded `/`
 * (`%2F`) stays inside its segment.
 */
export function matchOwnerPath(rawPath: string): OwnerPathMatch {
  const parts = rawPath.split('/');
  if (parts.length !== ROUTE.length) return { match: 'none' };
  for (let i = 0; i < ROUTE.length; i++) {
    const fixed = ROUTE[i];
    if (fixed === null ? parts[i] === '' : parts[i] !== fixed) return { match: 'none' };
  }
  const values: string[] = [];
  for (let i = 0; i < ROUTE.length; i++) {
    if (ROUTE[i] !== null) continue;
    const part = parts[i]!;
    try {
      values.push(decodeURIComponent(part));
    } catch {
      return { match: 'bad', message: `invalid percent-encoding in path segment ${JSON.stringify(part)}` };
    }
  }
  const [appId, resourceTypeId, resourceId, roleSlug, entitlementAppId, entitlementId] = values as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return {
    match: 'ok',
    owner: { appId, resourceTypeId, resourceId, roleSlug, entitlementAppId, entitlementId },
  };
}
