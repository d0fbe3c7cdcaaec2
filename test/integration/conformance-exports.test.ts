/**
 * The conformance exports on a synced sandbox tenant judged by the shipped recommended baseline:
 * `export oscal` writes an assessment-results document that NIST's OSCAL 1.2.1 schema accepts
 * (ajv), with one observation per control and one finding per control that failed at some instant;
 * `export ocsf --kind compliance` writes one Compliance Finding (2003) per status change in the
 * range, each valid against the OCSF 1.8.0 export.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBaselineFile } from '../../src/config/baseline.js';
import type { Baseline } from '../../src/core/conformance/baseline.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { dateKey } from '../../src/core/normalise/time.js';
import { writeOscal } from '../../src/outputs/conformance/oscal.js';
import { writeOcsfJsonl } from '../../src/outputs/ocsf/jsonl.js';
import { findJudgingBaseline } from '../../src/store/read/conformance-baseline.js';
import { readControlPeriods } from '../../src/store/read/control-periods.js';
import { judgeTenant } from '../../src/sync/conformance.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { ocsfProblems } from '../helpers/ocsf.js';
import { oscalProblems } from '../helpers/oscal.js';

let h: Harness;
let baseline: Baseline;
const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-conformance-exports-'));
const from = new Date('2024-01-01T00:00:00Z');
const to = new Date(Date.now() + 86_400_000);

beforeAll(async () => {
  h = await createHarness({ entries: 160, scenarios: true });
  expect((await h.sync()).status).toBe('succeeded');
  baseline = loadBaselineFile('baselines/recommended.yaml', DEFAULT_RANKS);
  // Judged in a transaction, as a run judges (the judge reads through a cursor).
  await h.database.db.transaction().execute((trx) => judgeTenant(trx, 'acme', baseline, null));
});
afterAll(async () => {
  await h?.close();
});

describe('export oscal', () => {
  it('writes an assessment-results document NIST OSCAL 1.2.1 accepts, one result, an observation per control', async () => {
    const out = path.join(dir, 'ar.json');
    const r = await writeOscal(h.database.db, {
      tenantIds: ['acme'],
      from,
      to,
      out,
      now: new Date(),
      productVersion: '0.0.0-test',
      ranks: DEFAULT_RANKS,
    });
    const doc = JSON.parse(readFileSync(out, 'utf8')) as {
      'assessment-results': {
        results: Array<{ observations: unknown[]; findings?: Array<{ target: { 'target-id': string } }> }>;
        'back-matter': { resources: Array<{ rlinks: Array<{ hashes: Array<{ value: string }> }> }> };
      };
    };
    expect(oscalProblems(doc)).toEqual([]);
    expect(r.results).toBe(1);
    expect(r.observations).toBe(baseline.controls.length);
    expect(doc['assessment-results']['back-matter'].resources[0]?.rlinks[0]?.hashes[0]?.value).toBe(
      baseline.sha256,
    );
    // A finding for exactly the controls with a fail or deleted period in the range.
    const periods = await readControlPeriods(h.database.db, 'acme', dateKey(from), dateKey(to));
    const failed = [
      ...new Set(
        periods.filter((p) => p.status === 'fail' || p.status === 'deleted').map((p) => p.controlId),
      ),
    ];
    const findings = doc['assessment-results'].results[0]?.findings ?? [];
    expect(findings.map((f) => f.target['target-id']).sort()).toEqual(failed.sort());
    expect(findings.length).toBeGreaterThan(0);
    expect(r.findings).toBe(findings.length);
  });

  it('refuses a tenant no baseline has judged', async () => {
    expect(await findJudgingBaseline(h.database.db, 'nobody')).toBeUndefined();
    await expect(
      writeOscal(h.database.db, {
        tenantIds: ['nobody'],
        from,
        to,
        out: path.join(dir, 'none.json'),
        now: new Date(),
        productVersion: '0',
        ranks: DEFAULT_RANKS,
      }),
    ).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('export ocsf --kind compliance', () => {
  it('one valid Compliance Finding (2003) per status change in the range, oldest first', async () => {
    const out = path.join(dir, 'c.jsonl');
    const r = await writeOcsfJsonl(h.database.db, {
      tenantId: 'acme',
      from,
      to,
      kind: 'compliance',
      out,
      now: new Date(),
      productVersion: '0.0.0-test',
      ranks: DEFAULT_RANKS,
    });
    const events = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            class_uid: number;
            time: number;
            activity_id: number;
            compliance: { control: string };
          },
      );
    expect(r.judged).toBe(true);
    expect(r.entityManagement + r.detectionFinding).toBe(0);
    const periods = await readControlPeriods(h.database.db, 'acme', dateKey(from), dateKey(to));
    const opening = periods.filter((p) => p.fromKey >= dateKey(from) && p.fromKey < dateKey(to));
    expect(events).toHaveLength(opening.length);
    expect(r.complianceFinding).toBe(events.length);
    expect(ocsfProblems(events)).toEqual([]);
    expect(events.every((e) => e.class_uid === 2003)).toBe(true);
    expect(events.map((e) => e.time)).toEqual([...events.map((e) => e.time)].sort((a, b) => a - b));
    // Each control's first period is a Create, every later one an Update.
    expect(events.filter((e) => e.activity_id === 1)).toHaveLength(baseline.controls.length);
  });

  it('all adds them after the changes and alerts', async () => {
    const r = await writeOcsfJsonl(h.database.db, {
      tenantId: 'acme',
      from,
      to,
      kind: 'all',
      out: path.join(dir, 'all.jsonl'),
      now: new Date(),
      productVersion: '0.0.0-test',
      ranks: DEFAULT_RANKS,
    });
    expect(r.entityManagement).toBeGreaterThan(0);
    expect(r.complianceFinding).toBeGreaterThan(0);
    const lines = readFileSync(path.join(dir, 'all.jsonl'), 'utf8').trimEnd().split('\n');
    expect((JSON.parse(lines.at(-1) as string) as { class_uid: number }).class_uid).toBe(2003);
    expect(ocsfProblems(lines.map((l) => JSON.parse(l)))).toEqual([]);
  });
});
