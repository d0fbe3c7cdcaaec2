/**
 * The files of an evidence pack and the question each one answers. One list, read by the pack
 * writer (order of the manifest), README.txt, `--help` and `verify-pack` (which names are expected).
 */

export const MANIFEST_FILE = 'manifest.json';
export const SIGNATURE_FILE = 'manifest.jws';
export const CHECKSUMS_FILE = 'SHA256SUMS';

export interface PackFileDescription {
  readonly name: string;
  /** The auditor's question, one line. */
  readonly answers: string;
  /** What is in it and how it was selected. */
  readonly detail: string;
}

/** Every file, in the order the manifest lists them (the manifest and its signature last). */
export const PACK_FILES: readonly PackFileDescription[] = [
  {
    name: 'README.txt',
    answers: 'What is in this pack, for which tenant and period, and how to check it?',
    detail: 'This file: a summary of the figures and the verification steps.',
  },
  {
    name: 'changes.csv',
    answers: 'Who changed which governance setting, when, from what to what, under which ticket?',
    detail:
      'The full population: every field change with a time in the period, one row each, oldest first ' +
      '(view change_log; the same columns as `govtrail export evidence`).',
  },
  {
    name: 'changes-without-ticket.csv',
    answers: 'Which changes were made without a ticket?',
    detail:
      'Every history entry of the period with no TICKET annotation, except entries made by a WORKFLOW or an ' +
      'AUTOMATION (view changes_without_ticket), with the fields it changed (empty when it changed none).',
  },
  {
    name: 'setting-periods.csv',
    answers: 'What was each setting, from when to when? (e.g. "tool approval was off from … to …")',
    detail:
      'One row per setting and period of constant value, cut to the period, grouped by setting, oldest first, ' +
      'with the entry, actor, tickets and direction of the change that began it (view settings_timeline). ' +
      'Each row agrees with govtrail.settings_as_of(tenant, at) at its start and end.',
  },
  {
    name: 'settings-at-start.json',
    answers: 'What were the settings when the period began?',
    detail:
      'govtrail.settings_as_of(tenant, --from): the settings in force at the first instant of the period.',
  },
  {
    name: 'settings-at-end.json',
    answers: 'What were the settings when the period ended?',
    detail:
      'govtrail.settings_as_of(tenant, --to minus 1 µs): the settings in force at the last instant of the ' +
      'period (--to itself is excluded).',
  },
  {
    name: 'alerts.csv',
    answers: 'Which changes raised an alert, how severe, did it reach its sinks, and was it acted on?',
    detail:
      'Every alert about a change of the period (alerts without an entry: raised in the period), oldest first, ' +
      'with its delivery status per sink (view alert_log) and its handling: state, who acknowledged and ' +
      'resolved it, when, the note, and every event in order (alert_event).',
  },
  {
    name: 'runs.csv',
    answers: 'Was the copy kept up to date throughout the period?',
    detail:
      'Every sync and reconcile run started in the period (table sync_run), oldest first, and a `gap` row ' +
      'wherever no run succeeded for longer than two schedule intervals.',
  },
  {
    name: 'integrity.json',
    answers: 'Can this history be trusted?',
    detail:
      'The tamper-evidence check of the stored chain (`govtrail verify`), the last reconcile against the ' +
      'source with its coverage record, the discrepancies recorded for entries of the period, and the run ' +
      'coverage of runs.csv in figures.',
  },
  {
    name: 'conformance/README.txt',
    answers:
      'Does the tenant meet the declared policy now, did it at every moment of the period, and where not: who, which ticket, accepted?',
    detail:
      'The answer in plain words, from the control periods judged by the tenant’s baseline (docs/design/conformance.md); ' +
      'when no baseline judged the tenant, says so and how to declare one (the files below are then absent).',
  },
  {
    name: 'conformance/baseline.yaml',
    answers: 'Which policy was the tenant judged by?',
    detail: 'The exact baseline text the stored periods were judged by (table baseline_text), byte for byte.',
  },
  {
    name: 'conformance/baseline.sha256',
    answers: 'Is that the policy’s exact text?',
    detail:
      'Its sha256, the baseline’s identity with its id, in sha256sum format (`sha256sum -c baseline.sha256` inside conformance/).',
  },
  {
    name: 'conformance/summary.csv',
    answers: 'How much of the period did each control pass, fail, or hold only by an exception?',
    detail:
      'One row per control and one for all controls: the share of [from, to) in each status (pass, fail, excepted, ' +
      'deleted, unknown), the compliant share, the status at the end, the number and longest of the fail periods.',
  },
  {
    name: 'conformance/periods.csv',
    answers:
      'When exactly was each control out of policy, who changed it, under which ticket, and was it accepted?',
    detail:
      'Every fail, deleted and excepted period overlapping the period (view control_period), cut to it, with the ' +
      'entry, actor and ticket that opened and closed it, and for an excepted period the exception that accepted it.',
  },
  {
    name: 'conformance/exceptions.csv',
    answers: 'Which deviations were accepted, by whom, until when?',
    detail:
      'Every exception of the baseline for this tenant that held at some instant of the period: the accepted value, ' +
      'rationale, approver, approval time (retroactive when before the baseline was first loaded), ticket, expiry.',
  },
  {
    name: 'report.html',
    answers: 'What did the governance posture look like over the period, at a glance?',
    detail:
      'The `govtrail report` of the period: posture timeline, changes per week, alerts, exporter health and ' +
      'source integrity. Self-contained, no scripts.',
  },
  {
    name: CHECKSUMS_FILE,
    answers: 'Are the files intact?',
    detail: 'The sha256 of every file above, for `sha256sum -c SHA256SUMS`.',
  },
  {
    name: MANIFEST_FILE,
    answers: 'Which files make up the pack?',
    detail:
      'Tenant, period, generation time, and every file above with its sha256, size in bytes and row count ' +
      '(data rows of a CSV, records of a JSON file; null for text).',
  },
  {
    name: SIGNATURE_FILE,
    answers: 'Who produced the pack?',
    detail:
      'Present when GOVTRAIL_EVIDENCE_SIGNING_KEY was set: an Ed25519 signature of manifest.json, as a detached ' +
      'JWS (RFC 7515 appendix F: compact form with an empty payload; alg EdDSA, kid = the key’s RFC 7638 thumbprint).',
  },
];

/**
 * Files a pack holds when an anchor of the tenant's chain was found (GOVTRAIL_ANCHOR_DIR):
 * listed in the manifest like the others, after the data files.
 */
export const ANCHOR_FILES: readonly PackFileDescription[] = [
  {
    name: 'anchor.json',
    answers: 'Can the stored history be checked against something kept outside the database?',
    detail:
      'The newest signed anchor of the tenant’s hash chain when the pack was made (a copy of the statement ' +
      'file from GOVTRAIL_ANCHOR_DIR): entries stored, the head entry and its row_hash, the time, and the ' +
      'sha256 of the anchor before it. `govtrail verify --anchors DIR --public-key FILE` checks the store ' +
      'against it (docs/tamper-evidence.md).',
  },
  {
    name: 'anchor.json.jws',
    answers: 'Who signed the anchor?',
    detail: 'The anchor’s Ed25519 signature, a detached JWS over anchor.json’s exact bytes (alg EdDSA).',
  },
  {
    name: 'anchor-public.pem',
    answers: 'Which key checks the anchor?',
    detail:
      'Present when the anchor signing key was configured: its public half. Trust it only if it matches the ' +
      'key you hold from elsewhere: a key shipped with the evidence proves nothing by itself.',
  },
];

/** The files the manifest lists (everything but the manifest and its signature). */
export const LISTED_FILES: readonly string[] = PACK_FILES.map((f) => f.name).filter(
  (n) => n !== MANIFEST_FILE && n !== SIGNATURE_FILE,
);
