/**
 * One realistic high alert (AIGOV-002, a loosening with a ticket), as the sinks receive it: the
 * fixture every sink test sends.
 */
import type { AlertMessage } from '../../src/core/alert.js';

export function sampleAlert(createdAt: Date): AlertMessage {
  return {
    alertId: '7',
    tenantId: 'acme',
    entryId: '2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
    ruleId: 'AIGOV-002',
    ruleVersion: 1,
    severity: 'high',
    title: 'Tool approval was turned off',
    summary: 'requireToolApproval: true → false. PUT by API at 2025-03-04T00:00:00Z, no ticket.',
    dedupeKey: 'AIGOV-002:acme:2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
    createdAt: createdAt.toISOString(),
    context: {
      tenantId: 'acme',
      entryId: '2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
      changedAt: '2025-03-04T00:00:00Z',
      changeKind: 'CHANGE_KIND_PUT',
      actor: { kind: 'ACTOR_KIND_API', userId: '2vYJmQ0pXgV7Ik8iKc0uXhKxA9P' },
      tickets: [{ value: 'SEC-9', url: 'https://jira.example/browse/SEC-9' }],
      reasons: [],
      changes: [
        {
          field: 'require_tool_approval',
          label: 'requireToolApproval',
          oldValue: true,
          newValue: false,
          direction: 'loosened',
        },
      ],
      allChanges: [],
      syslogEventId: null,
      traceId: null,
      runbook: 'Confirm with the actor, otherwise turn approval back on.',
      ruleName: 'tool-approval-disabled',
      details: {},
    },
  };
}
