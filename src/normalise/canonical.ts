/**
 * Canonical JSON and the text PostgreSQL's jsonb accepts. Pure.
 */
import { createHash } from 'node:crypto';

/**
 * JSON text that jsonb accepts: jsonb refuses `\u0000` and unpaired surrogate escapes, which
 * JSON.stringify can emit. Those become U+FFFD; everything else is JSON.stringify's output.
 */
export function toJsonbText(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  if (!text.includes('\\u')) return text;
  // Skip escaped backslashes first so that a literal "\\u0000" in a string is left alone.
  return text.replace(/\\\\|\\u(0000|d[89a-f][0-9a-f]{2})/gi, (m) => (m === '\\\\' ? m : '\\ufffd'));
}

/** JSON with object keys sorted at every depth: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    parts.push(`${JSON.stringify(k)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/** What a history_entry row's hash covers, besides the previous hash. */
export interface HashedEntry {
  readonly tenantId: string;
  readonly entryId: string;
  readonly createdAtText: string | null;
  /** The entry as stored (after toJsonbText and a JSON round trip). */
  readonly raw: unknown;
}

/**
 * row_hash = sha256(previous row_hash of the tenant ‖ canonical JSON of the row). The first row of
 * a tenant chains from 32 zero bytes.
 */
export function rowHash(previous: Uint8Array | null, row: HashedEntry): Buffer {
  const h = createHash('sha256');
  h.update(previous ?? Buffer.alloc(32));
  h.update(
    canonicalJson({
      tenant_id: row.tenantId,
      entry_id: row.entryId,
      created_at_text: row.createdAtText,
      raw: row.raw,
    }),
  );
  return h.digest();
}
