/**
 * `govtrail export evidence-pack`: the auditor's binder for a tenant and a period (src/outputs/pack/).
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import type { Config } from '../config/settings.js';
import { ConfigError, GovtrailError } from '../core/errors.js';
import { humanSeconds } from '../core/format.js';
import { PACK_FILES } from '../outputs/pack/files.js';
import type { MemberPack } from '../outputs/pack/group.js';
import type { EvidencePackResult } from '../outputs/pack/pack.js';
import type { PackProgress } from '../outputs/pack/pack-options.js';
import { wrap } from '../outputs/pack/readme.js';
import type { Logger } from '../runtime/logger.js';
import { govtrailVersion } from '../runtime/paths.js';
import { tenantSelection, timeArg } from './options.js';

/** The setting holding the pack signing key (outputs/pack/signing.ts names it the same). */
const SIGNING_KEY_SETTING = 'GOVTRAIL_EVIDENCE_SIGNING_KEY';

import { formatTable } from './table.js';

const HELP = `
Files of the pack (README.txt in the pack says the same):

${PACK_FILES.map((f) => `  ${f.name}\n${wrap(`${f.answers} ${f.detail}`, '      ', 100)}`).join('\n')}

The pack is written to DIR.partial and renamed to DIR when complete, with DIR.tar.gz next to it
(entries DIR/<file>). DIR must not exist or be empty. Every file is read in one read-only
snapshot of the database, and every list is streamed: memory does not grow with the period.

Coverage gaps (runs.csv): a gap is a stretch of more than two schedule intervals without a
successful run. The interval is derived from GOVTRAIL_SCHEDULE (the worker's cron expression,
UTC): the longest wait between two consecutive fire times over a year, so that a pause the
schedule itself makes (nights, weekends) is not a gap. --interval overrides it, e.g. when the
runs come from a Kubernetes CronJob with its own schedule.

Signing: with ${SIGNING_KEY_SETTING} (or ${SIGNING_KEY_SETTING}_FILE) set to an Ed25519
private key (PEM PKCS#8, e.g. from \`openssl genpkey -algorithm ed25519\`), manifest.json is signed
(manifest.jws, a detached JWS, alg EdDSA). \`govtrail verify-pack DIR --public-key KEY.pub\`
checks a pack. docs/evidence-pack.md shows how to check one without govtrail.

Exit codes: 0 the pack was written and the stored history verifies; 1 the export failed, or the
pack was written but the tamper-evidence chain does not verify (integrity.json says where);
2 a usage or configuration error (bad time, DIR not empty, unknown tenant, bad signing key).

A group (--group G): DIR holds one pack per member tenant of the group at this moment (DIR/TENANT
and DIR/TENANT.tar.gz, each README naming the group and its members), a README.txt naming the
group and its members, and group.json binding them by sha256 (signed as group.json.jws when the
packs are). govtrail verify-pack DIR checks the whole.`;

export function evidencePackCommand(): Command {
  const command = new Command('evidence-pack')
    .summary('write the auditor’s evidence pack of a period to a directory (and a .tar.gz)')
    .description(
      'Write one directory (and a .tar.gz of it) holding the evidence of [--from, --to) for one tenant: ' +
        'every field change, the changes without a ticket, each setting’s value periods, the settings ' +
        'at the start and the end, the alerts, the run ledger with coverage gaps, the integrity checks, ' +
        'the HTML report, a README.txt, SHA256SUMS and a manifest with each file’s sha256 and row count, ' +
        'signed when GOVTRAIL_EVIDENCE_SIGNING_KEY is set.',
    )
    .requiredOption('--from <time>', 'first instant included (RFC 3339, or a date = midnight UTC)', timeArg)
    .requiredOption('--to <time>', 'first instant excluded', timeArg)
    .requiredOption('--out <dir>', 'the pack directory to create (must not exist, or be empty)')
    .option(
      '--interval <duration>',
      'schedule interval of the coverage-gap rule, e.g. 15m (default: derived from GOVTRAIL_SCHEDULE)',
    )
    .addHelpText('after', HELP);
  return tenantSelection(command, 'pack', 'default: the only tenant stored').action(writePack);
}

interface PackOptions {
  readonly from: Date;
  readonly to: Date;
  readonly out: string;
  readonly tenant?: string;
  readonly group?: string;
  readonly interval?: string;
}

/** The action: writes the pack (or a group's), prints its files; TAMPERED when the stored history does not verify. */
async function writePack(opts: PackOptions): Promise<void> {
  const { from, to } = opts;
  if (to <= from) throw new GovtrailError('USAGE', '--to must be later than --from');
  const { checkPackTarget, writeEvidencePack } = await import('../outputs/pack/pack.js');
  const { checkGroupTarget, sealGroupPack } = await import('../outputs/pack/group.js');
  if (opts.tenant !== undefined && opts.group !== undefined)
    throw new GovtrailError('USAGE', '--tenant and --group exclude each other: name a tenant or a group');
  if (opts.group === undefined) checkPackTarget(opts.out);
  const { createContext } = await import('../app/context.js');
  const { storedTenants } = await import('../app/select-tenants.js');
  const { loadRulePack } = await import('../config/rule-pack.js');
  const { packAnchor } = await import('../outputs/anchor/pack-anchor.js');
  const { parseSigningKey } = await import('../outputs/pack/signing.js');
  const { registerSecret } = await import('../runtime/logger.js');
  const ctx = createContext();
  const { config } = ctx;
  const interval = await packInterval(opts.interval, config);
  registerSecret(config.evidenceSigningKey);
  const signingKey =
    config.evidenceSigningKey === undefined ? undefined : parseSigningKey(config.evidenceSigningKey);

  const database = await ctx.openDatabase({ existing: true });
  try {
    const tenants = await storedTenants(database.db, opts);
    const group = opts.group === undefined ? undefined : { name: opts.group, members: tenants };
    const target = group === undefined ? undefined : checkGroupTarget(opts.out);
    if (target !== undefined) mkdirSync(target.partial);
    const members: MemberPack[] = [];
    let findings = 0;
    let complete = false;
    try {
      for (const tenantId of tenants) {
        const progress = packProgress(tenantId, ctx.logger);
        let result: EvidencePackResult;
        try {
          result = await writeEvidencePack(database, {
            tenantId,
            from,
            to,
            out: target === undefined ? opts.out : path.join(target.partial, tenantId),
            now: new Date(),
            interval,
            signingKey,
            anchor: await packAnchor(config, tenantId),
            version: govtrailVersion(),
            onProgress: progress.update,
            rulePack: loadRulePack(config.alertRulesPath),
            group,
          });
        } finally {
          progress.done();
        }
        const text = formatPack(tenantId, from, to, result);
        // A member pack is written inside DIR.partial, renamed to DIR at the end: name the final place.
        ctx.out.write(target === undefined ? text : text.split(target.partial).join(target.dir));
        if (!result.summary.verify.ok) findings += result.summary.verify.findings;
        members.push({
          tenant: tenantId,
          manifestSha256: result.manifestSha256,
          archive: path.basename(result.archive),
          archiveSha256: result.archiveSha256,
        });
      }
      if (target !== undefined && group !== undefined) {
        await sealGroupPack({
          partial: target.partial,
          dir: target.dir,
          group: group.name,
          members,
          from,
          to,
          now: new Date(),
          version: govtrailVersion(),
          signingKey,
        });
        ctx.out.write(
          `\nevidence pack of group ${group.name} (${tenants.join(', ')}) in ${target.dir}: README.txt, group.json${signingKey === undefined ? '' : ', group.json.jws'}\n`,
        );
      }
      complete = true;
    } finally {
      if (!complete && target !== undefined) rmSync(target.partial, { recursive: true, force: true });
    }
    if (findings > 0) {
      throw new GovtrailError(
        'TAMPERED',
        `the pack was written, but the stored history does not verify: ${findings} finding(s), listed in integrity.json`,
      );
    }
  } finally {
    await database.close();
  }
}

/** The coverage-gap interval: --interval, else derived from GOVTRAIL_SCHEDULE. */
async function packInterval(
  text: string | undefined,
  config: Config,
): Promise<{ ms: number; source: string }> {
  if (text !== undefined) {
    const { parseDurationSetting } = await import('../core/setting-values.js');
    const ms = parseDurationSetting(text);
    if (ms === undefined || ms <= 0) {
      throw new GovtrailError(
        'USAGE',
        `--interval: a positive duration such as 15m or 1h is required, got ${JSON.stringify(text)}`,
      );
    }
    return { ms, source: `--interval ${text}` };
  }
  const { scheduleIntervalMs } = await import('../outputs/pack/schedule.js');
  const ms = scheduleIntervalMs(config.schedule);
  if (ms === undefined) {
    throw new ConfigError(
      'GOVTRAIL_SCHEDULE',
      `${JSON.stringify(config.schedule)} fires less than twice a year: no interval to judge coverage gaps by; pass --interval`,
    );
  }
  return { ms, source: `GOVTRAIL_SCHEDULE "${config.schedule}"` };
}

/** What the pack holds: one row per file, where it is, its coverage and its signature. */
function formatPack(tenantId: string, from: Date, to: Date, result: EvidencePackResult): string {
  const s = result.summary;
  return (
    `evidence pack of tenant ${tenantId} from ${from.toISOString()} to ${to.toISOString()}\n\n` +
    `${formatTable(
      ['file', 'rows', 'bytes', 'sha256'],
      result.files.map((f) => [
        f.name,
        f.rows === null ? '' : f.rows.toLocaleString('en'),
        f.bytes.toLocaleString('en'),
        `${f.sha256.slice(0, 16)}…`,
      ]),
    )}\n\n` +
    `  ${result.dir}\n  ${result.archive} (${result.archiveBytes.toLocaleString('en')} bytes, sha256 ${result.archiveSha256})\n` +
    `  coverage: ${s.coverage.gaps} gap(s) over ${humanSeconds(s.coverage.gapThresholdSeconds)} (2 × ${humanSeconds(s.coverage.intervalSeconds)}, ${s.intervalSource})\n` +
    `  ${s.signedBy === undefined ? `unsigned (set ${SIGNING_KEY_SETTING} to sign)` : `signed: manifest.jws, Ed25519 key ${s.signedBy}`}\n`
  );
}

/** Progress on stderr: a line redrawn in place on a terminal, a log line every 10 s otherwise. */
function packProgress(tenant: string, logger: Logger, stream: NodeJS.WriteStream = process.stderr) {
  const started = Date.now();
  const tty = stream.isTTY === true;
  let lastDraw = 0;
  let drawn = false;
  let lastStep = '';
  return {
    update(p: PackProgress) {
      const now = Date.now();
      const stepChanged = p.step !== lastStep;
      lastStep = p.step;
      const line = `${tenant}: ${p.step}${p.rows > 0 ? `, ${p.rows.toLocaleString('en')} rows` : ''} (${Math.round((now - started) / 1000)} s)`;
      if (tty) {
        if (!stepChanged && now - lastDraw < 100) return;
        lastDraw = now;
        drawn = true;
        stream.write(`\r\x1b[2K${line}`);
      } else if (now - lastDraw >= 10_000 && now - started >= 10_000) {
        lastDraw = now;
        logger.info({ tenant, step: p.step, rows: p.rows }, 'evidence pack progress');
      }
    },
    done() {
      if (tty && drawn) stream.write('\r\x1b[2K');
    },
  };
}
