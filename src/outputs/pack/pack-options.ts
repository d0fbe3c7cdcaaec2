/** What `writeEvidencePack` is asked for: the tenant, period and place, and how to sign and report. */
import type { KeyObject } from 'node:crypto';
import type { RulePack } from '../../core/rules/rules.js';

/** What the pack is doing, for a progress line. */
export interface PackProgress {
  readonly step: string;
  /** Rows written by the step so far. */
  readonly rows: number;
}

export interface EvidencePackOptions {
  readonly tenantId: string;
  readonly from: Date;
  readonly to: Date;
  /** The pack directory to create. */
  readonly out: string;
  /** The export's time (generatedAt, and the end of coverage for a period that has not ended). */
  readonly now: Date;
  /** The schedule interval of the gap rule, and where it came from (for README.txt). */
  readonly interval: { readonly ms: number; readonly source: string };
  /** Signs the manifest when given (Ed25519). */
  readonly signingKey?: KeyObject | undefined;
  /** govtrail's version, for the manifest. */
  readonly version: string;
  readonly onProgress?: ((p: PackProgress) => void) | undefined;
  /** Rows per database page (tests use small pages). */
  readonly pageSize?: number | undefined;
  /** The newest anchor of the tenant's chain, copied into the pack (ANCHOR_FILES). */
  readonly anchor?: PackAnchor | undefined;
  /** The rule pack the backfill findings are evaluated with (default: the built-in one). */
  readonly rulePack?: RulePack | undefined;
}

/** An anchor statement file, its detached JWS and, when known, the public key that checks it. */
export interface PackAnchor {
  readonly statement: Buffer;
  readonly jws: string;
  readonly publicKeyPem?: string | undefined;
}
