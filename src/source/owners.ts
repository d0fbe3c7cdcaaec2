/**
 * The DeleteEntitlementOwner operation's request (docs/design/tenant-api.md, "DeleteEntitlementOwner"): every
 * path segment percent-encoded, and the body's `appEntitlementRef` built from the same values as the last two
 * segments so that path and body cannot disagree.
 */
import { GovtrailError } from '../core/errors.js';

/** Identifies one entitlement ownership source of one app resource, under one role. */
export interface EntitlementOwnerRef {
  appId: string;
  resourceTypeId: string;
  resourceId: string;
  roleSlug: string;
  /** App id of the entitlement that is the ownership source (`appEntitlementRef.appId`). */
  entitlementAppId: string;
  /** Id of that entitlement (`appEntitlementRef.id`). */
  entitlementId: string;
}

const FIELDS = [
  'appId',
  'resourceTypeId',
  'resourceId',
  'roleSlug',
  'entitlementAppId',
  'entitlementId',
] as const;

/**
 * Percent-encodes one path segment: `encodeURIComponent`, plus `!'()*`, which it leaves alone but
 * some servers and proxies treat specially. `/`, `%`, `?`, `#`, spaces and non-ASCII all arrive
 * as the literal characters after the server decodes the segment.
 */
export function encodePathSegment(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

/**
 * Checks every id of `ref`: a non-empty string, not whitespace only, encodable, and not `.` or
 * `..` (which URL parsing would resolve as a path step, addressing another resource however it is
 * encoded). Throws INVALID_ARGUMENT naming the field; no request has been sent then.
 */
export function validateOwnerRef(ref: EntitlementOwnerRef): void {
  for (const field of FIELDS) {
    const value: unknown = ref[field];
    if (typeof value !== 'string' || value.trim() === '') {
      throw new GovtrailError('INVALID_ARGUMENT', `${field} must be a non-empty id; no request was sent`, {
        details: { field },
      });
    }
    if (value === '.' || value === '..') {
      throw new GovtrailError('INVALID_ARGUMENT', `${field} must not be "." or ".."; no request was sent`, {
        details: { field },
      });
    }
    try {
      encodeURIComponent(value);
    } catch (err) {
      throw new GovtrailError(
        'INVALID_ARGUMENT',
        `${field} is not well-formed Unicode; no request was sent`,
        {
          cause: err,
          details: { field },
        },
      );
    }
  }
}

/** The request path for `ref`, every segment encoded. Validates `ref` first. */
export function entitlementOwnerPath(ref: EntitlementOwnerRef): string {
  validateOwnerRef(ref);
  const s = (v: string) => encodePathSegment(v);
  return (
    `/api/v2/apps/${s(ref.appId)}/resource_types/${s(ref.resourceTypeId)}/resources/${s(ref.resourceId)}` +
    `/owners/entitlements/${s(ref.roleSlug)}/${s(ref.entitlementAppId)}/${s(ref.entitlementId)}`
  );
}

/** The JSON body for `ref`: the entitlement reference from the same values as the path. */
export function entitlementOwnerBody(ref: EntitlementOwnerRef): string {
  return JSON.stringify({ appEntitlementRef: { appId: ref.entitlementAppId, id: ref.entitlementId } });
}
