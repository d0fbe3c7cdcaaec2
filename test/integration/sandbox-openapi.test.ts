/**
 * The sandbox against the public OpenAPI description of the tenant API: real responses, over
 * real sockets, validated against the response schemas, so that the sandbox cannot drift from
 * the real API. Two deliberate readings:
 * - enums marked `x-speakeasy-unknown-values: allow` accept values outside the list (unknown values
 *   must be tolerated: docs/design/tenant-api.md), and the sandbox serves some;
 * - `format: duration` is the proto3 JSON duration ("3600s"), which is what the service sends,
 *   not an ISO 8601 duration.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';

// The public OpenAPI description's excerpt, copied from the design folder so the test runs on any clone.
const SPEC = path.resolve(import.meta.dirname, '../fixtures/tenant-api.openapi.yaml');
const LIST = 'c1.api.ai_governance.v1.ListAIGovernanceSettingsHistoryResponse';
const DELETE = 'c1.api.app.v2.DeleteAppResourceEntitlementOwnerResponse';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const PROTO_DURATION = /^-?\d+(\.\d{1,9})?s$/;

/** Drops the enum of every schema that declares unknown values allowed. */
function allowUnknownEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(allowUnknownEnums);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  const open = (node as Record<string, unknown>)['x-speakeasy-unknown-values'] === 'allow';
  for (const [k, v] of Object.entries(node)) {
    if (k === 'enum' && open) continue;
    out[k] = allowUnknownEnums(v);
  }
  return out;
}

let sb: Sandbox;
let token: string;
let validateList: (data: unknown) => boolean;
let validateDelete: (data: unknown) => boolean;
let errorsOf: () => unknown;

beforeAll(async () => {
  const doc = allowUnknownEnums(parse(readFileSync(SPEC, 'utf8'))) as Record<string, unknown>;
  // ajv is CommonJS: its class is the module's default export.
  const Ajv = Ajv2020.default;
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)),
  });
  ajv.addFormat('duration', { type: 'string', validate: (s: string) => PROTO_DURATION.test(s) });
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat('uint32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= 0 && n < 2 ** 32,
  });
  ajv.addSchema(doc, 'tenant-api');
  const list = ajv.getSchema(`tenant-api#/components/schemas/${LIST}`);
  const del = ajv.getSchema(`tenant-api#/components/schemas/${DELETE}`);
  if (list === undefined || del === undefined)
    throw new Error('response schemas not found in the OpenAPI excerpt');
  validateList = (data) => list(data) as boolean;
  validateDelete = (data) => del(data) as boolean;
  errorsOf = () => ajv.errorsText([...(list.errors ?? []), ...(del.errors ?? [])]);

  sb = await startSandbox({ entries: 2000, seed: 11, scenarios: true });
  const res = await fetch(`${sb.baseUrl}/auth/v1/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sb.credentials.secret.clientId,
      client_secret: sb.credentials.secret.clientSecret,
    }),
  });
  token = ((await res.json()) as { access_token: string }).access_token;
});
afterAll(async () => {
  await sb.close();
});

describe('sandbox responses against the OpenAPI description', () => {
  it('serves every history page in the ListAIGovernanceSettingsHistoryResponse schema', async () => {
    let next = '';
    let pages = 0;
    let entries = 0;
    do {
      const res = await fetch(
        `${sb.baseUrl}/api/v1/settings/ai-governance/history?page_size=100${next === '' ? '' : `&page_token=${next}`}`,
        { headers: { authorization: `Bearer ${token}` } },
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        list: Array<{ metadata: { changeKind?: string } }>;
        nextPageToken: string;
      };
      const valid = validateList(body);
      expect(valid, valid ? '' : String(errorsOf())).toBe(true);
      // docs/design/tenant-api.md: CHANGE_KIND_UNSPECIFIED must never appear on the wire.
      expect(body.list.some((e) => e.metadata.changeKind === 'CHANGE_KIND_UNSPECIFIED')).toBe(false);
      pages++;
      entries += body.list.length;
      next = body.nextPageToken;
    } while (next !== '');
    expect(pages).toBe(21);
    expect(entries).toBe(sb.history.size);
  });

  it('serves the emit-unpopulated encoding in the same schema', async () => {
    const full = await startSandbox({ entries: 1000, seed: 11, emitUnpopulated: true });
    try {
      const res = await fetch(`${full.baseUrl}/auth/v1/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: full.credentials.secret.clientId,
          client_secret: full.credentials.secret.clientSecret,
        }),
      });
      const bearer = ((await res.json()) as { access_token: string }).access_token;
      let next = '';
      let nulls = 0;
      do {
        const page = await fetch(
          `${full.baseUrl}/api/v1/settings/ai-governance/history?page_size=100${next === '' ? '' : `&page_token=${next}`}`,
          { headers: { authorization: `Bearer ${bearer}` } },
        );
        const body = (await page.json()) as { list: Array<{ snapshot: unknown }>; nextPageToken: string };
        const valid = validateList(body);
        expect(valid, valid ? '' : String(errorsOf())).toBe(true);
        nulls += body.list.filter((e) => e.snapshot === null).length;
        next = body.nextPageToken;
      } while (next !== '');
      expect(nulls).toBeGreaterThan(0);
    } finally {
      await full.close();
    }
  });

  it('would notice a response that breaks the schema', () => {
    expect(validateList({ list: [{ metadata: { createdAt: 'yesterday' } }], nextPageToken: '' })).toBe(false);
    expect(validateList({ list: [{ snapshot: { discoveryInterval: 'PT1H' } }], nextPageToken: '' })).toBe(
      false,
    );
    expect(validateList({ list: [{ snapshot: { codeModeConcurrency: 1.5 } }] })).toBe(false);
    expect(validateList({ list: [], nextPageToken: null })).toBe(false);
    expect(validateList({ list: 5 })).toBe(false);
  });

  it('serves the delete response in the DeleteAppResourceEntitlementOwnerResponse schema', async () => {
    const owner = sb.owners.list()[2]!;
    const segments = [
      owner.appId,
      owner.resourceTypeId,
      owner.resourceId,
      owner.roleSlug,
      owner.entitlementAppId,
      owner.entitlementId,
    ].map(encodeURIComponent);
    const url =
      `${sb.baseUrl}/api/v2/apps/${segments[0]}/resource_types/${segments[1]}/resources/${segments[2]}` +
      `/owners/entitlements/${segments[3]}/${segments[4]}/${segments[5]}`;
    const res = await fetch(url, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appEntitlementRef: { appId: owner.entitlementAppId, id: owner.entitlementId } }),
    });
    expect(res.status).toBe(200);
    const body: unknown = await res.json();
    expect(validateDelete(body)).toBe(true);
    expect(body).toEqual({});
  });
});
