import { describe, expect, it } from 'vitest';
import { GovtrailError } from '../../src/core/errors.js';
import {
  type EntitlementOwnerRef,
  encodePathSegment,
  entitlementOwnerBody,
  entitlementOwnerPath,
} from '../../src/source/owners.js';

const NASTY = [
  'a/b',
  '100%',
  'what?',
  'frag#ment',
  'with space',
  'ünïcødé-日本',
  "it's (*)!",
  '..%2F',
  '+plus&amp=x;',
];

const ref: EntitlementOwnerRef = {
  appId: 'app/1',
  resourceTypeId: 'type%2',
  resourceId: 'res?3#x',
  roleSlug: 'role slug',
  entitlementAppId: 'ent-app/ü',
  entitlementId: "ent*(')!",
};

describe('encodePathSegment', () => {
  it('leaves only unreserved characters unescaped and round-trips every nasty value', () => {
    for (const v of NASTY) {
      const encoded = encodePathSegment(v);
      expect(encoded, v).toMatch(/^[A-Za-z0-9\-_.~%]*$/);
      expect(decodeURIComponent(encoded)).toBe(v);
    }
  });

  it("encodes !'()* too", () => {
    expect(encodePathSegment("!'()*")).toBe('%21%27%28%29%2A');
  });
});

describe('entitlementOwnerPath', () => {
  it('puts each id, encoded, in its own segment in the documented order', () => {
    const segments = entitlementOwnerPath(ref).split('/').slice(1);
    expect(segments.map((s) => decodeURIComponent(s))).toEqual([
      'api',
      'v2',
      'apps',
      ref.appId,
      'resource_types',
      ref.resourceTypeId,
      'resources',
      ref.resourceId,
      'owners',
      'entitlements',
      ref.roleSlug,
      ref.entitlementAppId,
      ref.entitlementId,
    ]);
  });

  it('survives URL parsing unchanged', () => {
    const path = entitlementOwnerPath(ref);
    expect(new URL(`https://tenant.example${path}`).pathname).toBe(path);
  });

  it('rejects empty, whitespace-only and dot-segment ids with INVALID_ARGUMENT naming the field', () => {
    for (const [field, value] of [
      ['appId', ''],
      ['resourceId', '   '],
      ['roleSlug', '\t\n'],
      ['entitlementId', '.'],
      ['resourceTypeId', '..'],
      ['entitlementAppId', '\ud800'],
    ] as const) {
      let caught: unknown;
      try {
        entitlementOwnerPath({ ...ref, [field]: value });
      } catch (err) {
        caught = err;
      }
      expect(caught, field).toBeInstanceOf(GovtrailError);
      expect((caught as GovtrailError).code).toBe('INVALID_ARGUMENT');
      expect((caught as GovtrailError).message).toContain(field);
    }
  });
});

describe('entitlementOwnerBody', () => {
  it('carries the same entitlement reference as the last two path segments', () => {
    const body = JSON.parse(entitlementOwnerBody(ref));
    expect(body).toEqual({ appEntitlementRef: { appId: ref.entitlementAppId, id: ref.entitlementId } });
    const segments = entitlementOwnerPath(ref).split('/');
    expect(decodeURIComponent(segments.at(-2)!)).toBe(body.appEntitlementRef.appId);
    expect(decodeURIComponent(segments.at(-1)!)).toBe(body.appEntitlementRef.id);
  });
});
