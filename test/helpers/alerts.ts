/**
 * Shared pieces of the end-to-end alert tests: a known baseline of the settings, a scenario runner
 * (seeded history + baseline → backfill run → scenario entries → second run), and readers of the
 * alert outbox and of field_change.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type { AlertContext } from '../../src/core/alert.js';
import type { EntrySpec, Sandbox, SandboxEntry } from '../../src/sandbox/index.js';
import type { Session } from '../../src/store/database.js';
import type { RunSummary } from '../../src/sync/run-types.js';
import { createHarness, type Harness } from './harness.js';

export const HOUR = 3600;
export const DAY = 86_400;

/** A fully specified, governance-tight starting point every scenario begins from. */
export const BASELINE: Readonly<Record<string, unknown>> = {
  allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL'],
  auditVerbosity: 'AUDIT_VERBOSITY_FULL',
  autoDiscoveryEnabled: false,
  defaultToolClassification: 'TOOL_CLASSIFICATION_WRITE',
  enabled: true,
  preferCodeModeOverDirectTools: false,
  requireToolApproval: true,
  surfaceRequestableTools: false,
  defaultClientLifecycle: {
    inactivityHideAfter: '604800s',
    inactivityCloseAfter: '2592000s',
    retentionDeleteAfter: '31536000s',
  },
};

/** An entry of a scenario: an EntrySpec, placed `after` seconds after the previous one (default a day). */
export type Step = EntrySpec & { after?: number };

export const ticket = (id: string) => ({
  kind: 'ANNOTATION_KIND_TICKET',
  rawValue: id,
  displayValue: id,
  displayUrl: `https://acme.atlassian.net/browse/${id}`,
});

/** createdAt of the newest entry the sandbox serves, in epoch seconds (whole). */
function newestSeconds(sandbox: Sandbox): number {
  const top = sandbox.history.entries()[0] as SandboxEntry | undefined;
  const at = top?.metadata?.createdAt;
  return at === undefined ? Date.parse('2025-01-06T09:00:00Z') / 1000 : Math.floor(Date.parse(at) / 1000);
}

/** Appends steps at explicit times (so that no accidental burst happens); returns the served entries. */
export function appendSteps(sandbox: Sandbox, steps: readonly Step[]): SandboxEntry[] {
  let seconds = newestSeconds(sandbox);
  return steps.map(({ after, ...spec }) => {
    seconds += after ?? DAY;
    return sandbox.history.appendEntry({ at: new Date(seconds * 1000).toISOString(), ...spec });
  });
}

export function idOf(entry: SandboxEntry): string {
  return entry.metadata?.id as string;
}

/** One row of govtrail.alert. */
export interface AlertRow {
  alert_id: number;
  entry_id: string | null;
  rule_id: string;
  rule_version: number;
  severity: string;
  title: string;
  summary: string;
  context: AlertContext;
  dedupe_key: string;
  run_id: number | null;
}

/** Alerts, oldest first; of one run when `runId` is given. */
export async function alertRows(db: Session, runId?: number): Promise<AlertRow[]> {
  const { rows } = await sql<AlertRow>`
    select alert_id::int as alert_id, entry_id, rule_id, rule_version, severity, title, summary, context,
           dedupe_key, run_id::int as run_id
    from govtrail.alert
    where ${runId === undefined ? sql`true` : sql`run_id = ${runId}`}
    order by alert_id`.execute(db);
  return rows;
}

export interface DeliveryRow {
  alert_id: number;
  sink: string;
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date;
}

export async function deliveryRows(db: Session): Promise<DeliveryRow[]> {
  const { rows } = await sql<DeliveryRow>`
    select alert_id::int as alert_id, sink, status, attempts, last_error, next_attempt_at
    from govtrail.alert_delivery order by alert_id, sink`.execute(db);
  return rows;
}

export interface FieldChangeRow {
  entry_id: string;
  field: string;
  old_value: unknown;
  new_value: unknown;
  direction: string;
}

export async function fieldChanges(db: Session, entryIds: readonly string[]): Promise<FieldChangeRow[]> {
  if (entryIds.length === 0) return [];
  const { rows } = await sql<FieldChangeRow>`
    select entry_id, field, old_value, new_value, direction from govtrail.field_change
    where tenant_id = 'acme' and entry_id = any(${[...entryIds]}::text[])
    order by entry_id, field`.execute(db);
  return rows;
}

export interface Scenario {
  readonly h: Harness;
  /** The second (incremental) run. */
  readonly run: RunSummary;
  /** Entries appended after the backfill, in order. */
  readonly entries: SandboxEntry[];
  /** Alerts of the second run. */
  readonly alerts: AlertRow[];
}

/**
 * Seeds 20 entries, appends the baseline and `before` (ticketed unless they say otherwise), runs the
 * backfill, appends `after`, runs again. The caller closes `h`.
 */
export async function runScenario(
  o: { before?: readonly Step[]; after: readonly Step[]; seed?: number },
  env: Record<string, string> = {},
): Promise<Scenario> {
  const h = await createHarness({ entries: 20, seed: o.seed ?? 21 }, env);
  try {
    appendSteps(h.sandbox, [{ annotations: [ticket('SEC-1')], set: { ...BASELINE } }, ...(o.before ?? [])]);
    const first = await h.sync();
    if (first.status !== 'succeeded') throw new Error(`backfill run ${first.status}`);
    const entries = appendSteps(h.sandbox, o.after);
    const run = await h.sync();
    if (run.status !== 'succeeded') throw new Error(`second run ${run.status}: ${run.error?.message}`);
    return { h, run, entries, alerts: await alertRows(h.database.db, run.runId) };
  } catch (err) {
    await h.close();
    throw err;
  }
}

/** Writes a GOVTRAIL_ALERT_RULES override file in a fresh temporary directory; returns its path. */
export function rulesFile(yaml: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-rules-'));
  const file = path.join(dir, 'rules.yaml');
  writeFileSync(file, yaml);
  return file;
}

/** A request a {@link Receiver} got. */
export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A local HTTP receiver on 127.0.0.1:0. `status(request, attempt)` answers each request; `attempt`
 * counts the requests so far with the same X-Govtrail-Delivery id, this one included.
 */
export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Stops listening and drops open sockets; the port stays reserved for {@link restart}. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(
  status: (request: Received, attempt: number) => number = () => 204,
): Promise<Receiver> {
  const received: Received[] = [];
  let server: Server | undefined;
  let port = 0;
  const listen = async () => {
    const s = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const request: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        received.push(request);
        const id = req.headers['x-govtrail-delivery'];
        const attempt = received.filter((r) => r.headers['x-govtrail-delivery'] === id).length;
        res.writeHead(status(request, attempt), { connection: 'close' }).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  const stop = async () => {
    const s = server;
    server = undefined;
    if (s === undefined) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    stop,
    restart: listen,
    close: stop,
  };
}
