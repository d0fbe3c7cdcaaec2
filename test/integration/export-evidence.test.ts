/**
 * `govtrail export evidence` end to end over the database: hostile annotation values survive the
 * CSV intact (modulo the formula prefix), the row count matches change_log, and the sidecar
 * verifies in sha256sum format.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVIDENCE_HEADER, writeEvidenceCsv } from '../../src/outputs/evidence/evidence.js';
import { parseCsv } from '../helpers/csv.js';
import { createTestDatabase } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness;

const HOSTILE = [
  '=HYPERLINK("http://x")',
  '+1',
  '-2',
  '@x',
  'quote " and, comma',
  'two\nlines',
  'ünïcödé ✓ 🚀',
];

beforeAll(async () => {
  h = await createHarness({ entries: 30, seed: 4, start: '2025-02-03T09:00:00Z' });
  expect((await h.sync()).status).toBe('succeeded');
  for (const [i, v] of HOSTILE.entries()) {
    h.sandbox.history.appendEntry({
      annotations: [
        { kind: 'ANNOTATION_KIND_TICKET', rawValue: v, displayValue: v, displayUrl: 'https://t.example/1' },
        { kind: 'ANNOTATION_KIND_REASON', rawValue: v },
      ],
      // A value never seen before, so every entry records a field change.
      set: { discoveryInterval: `${7001 + i}s` },
    });
  }
  expect((await h.sync()).status).toBe('succeeded');
});
afterAll(async () => {
  await h?.close();
});

describe('export evidence', () => {
  it('writes every change of the period once, hostile values intact and neutralised', async () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-export-')), 'evidence.csv');
    // A page size far below the row count would be nicer; the default (2000) is covered by the
    // keyset unit of iterateChanges. Here the whole history is exported.
    const res = await writeEvidenceCsv(h.database.db, {
      tenantId: 'acme',
      from: new Date('2000-01-01T00:00:00Z'),
      to: new Date('2100-01-01T00:00:00Z'),
      out,
    });
    const text = readFileSync(out, 'utf8');
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual([...EVIDENCE_HEADER]);
    const { rows: n } = await sql<{ n: number }>`select count(*)::int as n from govtrail.change_log`.execute(
      h.database.db,
    );
    expect(rows.length).toBe(n[0]?.n);
    expect(res.rows).toBe(rows.length);
    for (const r of rows) for (const cell of r) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    const ticketCol = EVIDENCE_HEADER.indexOf('tickets');
    const reasonCol = EVIDENCE_HEADER.indexOf('reasons');
    const unprefix = (s: string) => (/^'[=+\-@\t\r]/.test(s) ? s.slice(1) : s);
    const seen = new Set(rows.flatMap((r) => [unprefix(r[ticketCol] ?? ''), unprefix(r[reasonCol] ?? '')]));
    for (const v of HOSTILE) expect(seen).toContain(v);
    // Rows in (time, entry) order.
    const times = rows.map((r) => r[EVIDENCE_HEADER.indexOf('changed_at')] ?? '');
    expect([...times].sort()).toEqual(times);
  });

  it('writes a sha256sum-format sidecar that matches the file', async () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-export-')), 'e.csv');
    const res = await writeEvidenceCsv(h.database.db, {
      tenantId: 'acme',
      from: new Date('2000-01-01T00:00:00Z'),
      to: new Date('2100-01-01T00:00:00Z'),
      out,
    });
    const digest = createHash('sha256').update(readFileSync(out)).digest('hex');
    expect(readFileSync(res.sha256Path, 'utf8')).toBe(`${digest}  e.csv\n`);
  });

  it('excludes changes at or after --to and before --from', async () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-export-')), 'none.csv');
    const res = await writeEvidenceCsv(h.database.db, {
      tenantId: 'acme',
      from: new Date('2000-01-01T00:00:00Z'),
      to: new Date('2000-01-02T00:00:00Z'),
      out,
    });
    expect(res.rows).toBe(0);
    expect(parseCsv(readFileSync(out, 'utf8'))).toHaveLength(1);
  });

  it('leaves nothing under the final name, nor a .partial, when the export fails midway', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-export-'));
    const out = path.join(dir, 'broken.csv');
    // A closed database: the header is written, then the first page fails.
    const gone = await createTestDatabase();
    await gone.close();
    await expect(
      writeEvidenceCsv(gone.database.db, {
        tenantId: 'acme',
        from: new Date('2000-01-01T00:00:00Z'),
        to: new Date('2100-01-01T00:00:00Z'),
        out,
      }),
    ).rejects.toThrow();
    // Let any file operation still under way settle (a stream opens its file asynchronously), so
    // that a file created late is seen too. Not a measure of speed: nothing may appear at all.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(readdirSync(dir)).toEqual([]);
  });
});
