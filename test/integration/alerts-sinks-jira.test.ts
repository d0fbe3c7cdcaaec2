/**
 * The Jira Cloud sink over real sockets, against a local receiver that checks the request shapes of
 * Atlassian's REST API v3 as docs/design/alert-destinations.md ("Jira Cloud") writes them down:
 * basic auth, POST /rest/api/3/issue with project, issuetype, summary, an ADF description and
 * labels (no spaces); POST /rest/api/3/search/jql; POST /rest/api/3/issue/{key}/comment with an ADF
 * body; POST /rest/api/3/issue/{key}/transitions with a transition id. On real PostgreSQL: one
 * issue per alert dedupe key (a retried delivery does not open another), a comment on each repeat
 * and each handling event, and the transition on resolve.
 */

import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverPending } from '../../src/alerts/deliver.js';
import { createJiraSink, jiraDedupeLabel } from '../../src/alerts/sinks/index.js';
import { defaultRulesPath } from '../../src/config/rule-pack.js';
import type { AlertDraft, Sink } from '../../src/core/alert.js';
import { parseRulePack } from '../../src/core/rules/pack-schema.js';
import { alertPolicy } from '../../src/core/rules/suppression.js';
import { silentLogger } from '../../src/runtime/logger.js';
import type { Session } from '../../src/store/database.js';
import { eventDeliveryStore, recordAlertEvents } from '../../src/store/write/alert-events.js';
import { deliveryStore, insertAlerts } from '../../src/store/write/outbox.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

interface Call {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly json: Record<string, unknown>;
}

/** Whether `node` is a valid ADF node of the subset govtrail writes (doc at the top, non-empty text). */
function adfProblems(node: unknown, top = true): string[] {
  const n = node as { type?: unknown; version?: unknown; content?: unknown; text?: unknown };
  if (top && (n.type !== 'doc' || n.version !== 1)) return ['not a doc of version 1'];
  if (n.type === 'text') return typeof n.text === 'string' && n.text !== '' ? [] : ['empty text node'];
  if (!['doc', 'paragraph', 'bulletList', 'listItem', 'heading'].includes(String(n.type)))
    return [`node type ${String(n.type)}`];
  if (!Array.isArray(n.content)) return [`${String(n.type)} without content`];
  return n.content.flatMap((c) => adfProblems(c, false));
}

/** A small Jira Cloud: issues by key with labels, comments, transitions; 400 to a malformed request. */
async function fakeJira() {
  const calls: Call[] = [];
  const issues: Array<{ key: string; labels: string[]; comments: unknown[]; transitions: string[] }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      const path = req.url ?? '';
      calls.push({ method: req.method ?? '', path, headers: req.headers, json });
      const answer = (status: number, body?: unknown) => {
        res
          .writeHead(status, { 'content-type': 'application/json' })
          .end(body === undefined ? '' : JSON.stringify(body));
      };
      const expectedAuth = `Basic ${Buffer.from('bot@acme.example:tok3n', 'utf8').toString('base64')}`;
      if (req.headers.authorization !== expectedAuth) return answer(401, { errorMessages: ['unauthorised'] });
      if (req.method !== 'POST' || req.headers['content-type'] !== 'application/json') return answer(405);
      if (path === '/rest/api/3/issue') {
        const f = json['fields'] as Record<string, unknown> | undefined;
        const labels = f?.['labels'] as string[] | undefined;
        const errors: string[] = [];
        if ((f?.['project'] as { key?: string })?.key !== 'SEC') errors.push('project');
        if (typeof (f?.['issuetype'] as { name?: string })?.name !== 'string') errors.push('issuetype');
        if (
          typeof f?.['summary'] !== 'string' ||
          (f['summary'] as string).length > 255 ||
          /\n/.test(f['summary'] as string)
        )
          errors.push('summary');
        errors.push(...adfProblems(f?.['description']));
        if (!Array.isArray(labels) || labels.some((l) => /\s/.test(l))) errors.push('labels');
        if (errors.length > 0) return answer(400, { errors });
        const key = `SEC-${issues.length + 1}`;
        issues.push({ key, labels: labels as string[], comments: [], transitions: [] });
        return answer(201, {
          id: String(10_000 + issues.length),
          key,
          self: `http://jira/rest/api/3/issue/${key}`,
        });
      }
      if (path === '/rest/api/3/search/jql') {
        const m = /^project = "SEC" AND labels = "([^"]+)"$/.exec(String(json['jql']));
        if (m === null || !Array.isArray(json['fields'])) return answer(400, { errorMessages: ['bad jql'] });
        const found = issues.filter((i) => i.labels.includes(m[1] as string));
        return answer(200, { issues: found.map((i) => ({ id: '1', key: i.key, fields: {} })) });
      }
      const comment = /^\/rest\/api\/3\/issue\/(SEC-\d+)\/comment$/.exec(path);
      if (comment !== null) {
        const issue = issues.find((i) => i.key === comment[1]);
        if (issue === undefined) return answer(404);
        const problems = adfProblems(json['body']);
        if (problems.length > 0) return answer(400, { errors: problems });
        issue.comments.push(json['body']);
        return answer(201, { id: String(issue.comments.length) });
      }
      const transition = /^\/rest\/api\/3\/issue\/(SEC-\d+)\/transitions$/.exec(path);
      if (transition !== null) {
        const issue = issues.find((i) => i.key === transition[1]);
        const id = (json['transition'] as { id?: unknown } | undefined)?.id;
        if (issue === undefined || typeof id !== 'string') return answer(400);
        issue.transitions.push(id);
        return answer(204);
      }
      return answer(404);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, calls, issues, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let t: TestDatabase;
let db: Session;
let jira: Awaited<ReturnType<typeof fakeJira>>;
let sinks: Sink[];

beforeAll(async () => {
  t = await createTestDatabase();
  db = t.database.db;
  jira = await fakeJira();
  sinks = [
    createJiraSink({
      url: jira.url,
      email: 'bot@acme.example',
      apiToken: 'tok3n',
      project: 'SEC',
      issueType: 'Task',
      labels: ['ai-governance'],
      resolveTransition: '31',
    }),
  ];
});
afterAll(async () => {
  await jira?.close();
  await t?.close();
});

async function deliverAll(): Promise<{ failed: number }> {
  const a = await deliverPending({ store: deliveryStore(db), sinks, logger: silentLogger });
  const b = await deliverPending({ store: eventDeliveryStore(db), sinks, logger: silentLogger });
  return { failed: a.failed + a.retried + b.failed + b.retried };
}

describe('the Jira sink', () => {
  it('creates one issue per dedupe key, comments each repeat and handling event, and transitions on resolve', async () => {
    const policy = alertPolicy(
      parseRulePack(
        readFileSync(defaultRulesPath(), 'utf8'),
        'rules:\n  - id: AIGOV-002\n    suppress: { window: 1h, by: [tenant] }\n',
      ),
    );
    const base = sampleAlert(new Date());
    const draft = (n: number): AlertDraft => ({
      ruleId: 'AIGOV-002',
      ruleVersion: 1,
      severity: 'high',
      title: base.title,
      summary: base.summary,
      entryId: `e${n}`,
      dedupeKey: `AIGOV-002:acme:e${n}`,
      context: { ...base.context, entryId: `e${n}`, changedAt: `2025-03-04T00:0${n}:00Z` },
    });
    await insertAlerts(db, 'acme', null, [draft(1)], [{ name: 'jira', route: {} }], policy);
    expect(await deliverAll()).toEqual({ failed: 0 });
    await insertAlerts(db, 'acme', null, [draft(2), draft(3)], [{ name: 'jira', route: {} }], policy);
    const { rows } = await sql<{ alert_id: string }>`select alert_id::text from govtrail.alert`.execute(db);
    expect(rows).toHaveLength(1);
    const id = Number(rows[0]?.alert_id);
    await recordAlertEvents(db, [id], { kind: 'acknowledged', actor: 'alice' });
    await recordAlertEvents(db, [id], { kind: 'resolved', actor: 'alice', note: 'reverted' });
    expect(await deliverAll()).toEqual({ failed: 0 });

    expect(jira.issues).toHaveLength(1);
    const issue = jira.issues[0];
    expect(issue?.labels).toEqual([
      'govtrail',
      jiraDedupeLabel('AIGOV-002:acme:e1'),
      'AIGOV-002',
      'govtrail-high',
      'ai-governance',
    ]);
    // Two repeats, the acknowledgement and the resolve.
    expect(issue?.comments).toHaveLength(4);
    expect(JSON.stringify(issue?.comments[0])).toContain('repeated (1 so far) automatically');
    expect(JSON.stringify(issue?.comments[3])).toContain('resolved by alice: reverted');
    expect(issue?.transitions).toEqual(['31']);
    const create = jira.calls.find((c) => c.path === '/rest/api/3/issue');
    expect(create?.json['fields']).toMatchObject({
      project: { key: 'SEC' },
      issuetype: { name: 'Task' },
      summary: '[HIGH] Tool approval was turned off (tenant acme)',
      description: { type: 'doc', version: 1 },
    });
    expect(jira.calls.every((c) => c.headers.accept === 'application/json')).toBe(true);
  });

  it('a delivery retried after its issue was created does not open a second one', async () => {
    const alert = { ...sampleAlert(new Date()), dedupeKey: 'AIGOV-003:acme:x', alertId: '99' };
    const before = jira.issues.length;
    const sink = sinks[0] as Sink;
    await sink.deliver(alert, { deliveryId: 'd', attempt: 1 });
    await sink.deliver(alert, { deliveryId: 'd', attempt: 2 });
    expect(jira.issues.length).toBe(before + 1);
  });

  it('a wrong token is a permanent failure naming the status', async () => {
    const sink = createJiraSink({
      url: jira.url,
      email: 'bot@acme.example',
      apiToken: 'wrong',
      project: 'SEC',
      issueType: 'Task',
      labels: [],
      resolveTransition: undefined,
    });
    await expect(
      sink.deliver(sampleAlert(new Date()), { deliveryId: 'd', attempt: 1 }),
    ).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining('401'),
    });
  });
});
