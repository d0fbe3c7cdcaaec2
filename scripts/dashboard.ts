/**
 * `npm run dashboard`: writes the Grafana dashboard dashboards/grafana/govtrail.json from the typed
 * builders of @grafana/grafana-foundation-sdk (`-- --check`: exit 1 when the committed file differs).
 *
 * Every panel reads govtrail's public views (docs/data-dictionary.md) through a PostgreSQL data
 * source logged in with a role granted `govtrail_reader`, picked by the `datasource` variable, for
 * the tenant in the `tenant` variable. Each query filters on the tenant and on an indexed time
 * column, so a 30-day range reads 30 days of rows (docs/dashboards.md has the figures at 1 M entries).
 *
 * The columns a panel shows are named in the panel itself (an `organize` transformation for tables,
 * the field a stat reduces, series overrides): test/integration/dashboard-queries.test.ts runs every
 * query against a synced database and checks that those columns come back.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PanelBuilder as BarChart } from '@grafana/grafana-foundation-sdk/barchart';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import {
  BarAlignment,
  BigValueColorMode,
  BigValueGraphMode,
  BigValueTextMode,
  GraphDrawStyle,
  LegendDisplayMode,
  LegendPlacement,
  ReduceDataOptionsBuilder,
  StackingConfigBuilder,
  StackingMode,
  VisibilityMode,
  VizLegendOptionsBuilder,
  VizOrientation,
} from '@grafana/grafana-foundation-sdk/common';
import {
  type Dashboard,
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  type DynamicConfigValue,
  MappingType,
  type Panel,
  QueryVariableBuilder,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  type ValueMapping,
  VariableRefresh,
  VariableSort,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as Stat } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as StateTimeline } from '@grafana/grafana-foundation-sdk/statetimeline';
import { PanelBuilder as Table } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeSeries } from '@grafana/grafana-foundation-sdk/timeseries';

/** The committed dashboard, relative to the repository root. */
export const DASHBOARD_FILE = 'dashboards/grafana/govtrail.json';
/** Plugin id of Grafana's PostgreSQL data source (10.2 and later; `postgres` before). */
export const DATASOURCE_TYPE = 'grafana-postgresql-datasource';
/** uid of the data source that dashboards/grafana/provisioning/ creates. */
export const DATASOURCE_UID = 'govtrail-postgres';

// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana variable syntax, not a template
const DATASOURCE = { type: DATASOURCE_TYPE, uid: '${datasource}' };

type Format = 'table' | 'time_series';

/** A query of Grafana's PostgreSQL data source in code mode (the SDK has no builder for it). */
interface SqlQuery extends cog.Dataquery {
  refId: string;
  datasource: { type: string; uid: string };
  editorMode: 'code';
  format: Format;
  rawQuery: true;
  rawSql: string;
}

class SqlQueryBuilder implements cog.Builder<cog.Dataquery> {
  private readonly query: SqlQuery;

  constructor(rawSql: string, format: Format) {
    this.query = {
      refId: 'A',
      datasource: DATASOURCE,
      editorMode: 'code',
      format,
      rawQuery: true,
      rawSql: sqlText(rawSql),
      _implementsDataqueryVariant() {},
    };
  }

  build(): SqlQuery {
    return this.query;
  }
}

/** Strips the indentation of a template literal, so that the SQL reads well in the JSON and in Grafana. */
function sqlText(text: string): string {
  const lines = text.replace(/^\n/, '').replace(/\s+$/, '').split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)?.[0].length ?? 0));
  return lines.map((l) => l.slice(indent)).join('\n');
}

const sql = (rawSql: string) => new SqlQueryBuilder(rawSql, 'table');
const series = (rawSql: string) => new SqlQueryBuilder(rawSql, 'time_series');

/** Names and orders a table's columns: the columns the panel expects from its query. */
function organize(columns: ReadonlyArray<readonly [column: string, label: string]>) {
  return {
    id: 'organize',
    options: {
      excludeByName: {},
      indexByName: Object.fromEntries(columns.map(([c], i) => [c, i])),
      renameByName: Object.fromEntries(columns.map(([c, label]) => [c, label])),
    },
  };
}

/**
 * The single field a stat panel shows. A time is returned as epoch milliseconds (a number), which a
 * stat shows with the unit `dateTimeFromNow`.
 */
const field = (name: string) => new ReduceDataOptionsBuilder().calcs(['lastNotNull']).fields(`/^${name}$/`);

const color = (c: string): DynamicConfigValue => ({ id: 'color', value: { mode: 'fixed', fixedColor: c } });
const displayName = (n: string): DynamicConfigValue => ({ id: 'displayName', value: n });
const unit = (u: string): DynamicConfigValue => ({ id: 'unit', value: u });

function textMapping(entries: Record<string, { text: string; color: string }>): ValueMapping {
  return {
    type: MappingType.ValueToText,
    options: Object.fromEntries(Object.entries(entries).map(([value, r], index) => [value, { ...r, index }])),
  };
}

const TOOL_APPROVAL_STATES = textMapping({
  required: { text: 'required', color: 'green' },
  off: { text: 'OFF', color: 'red' },
  deleted: { text: 'settings deleted', color: 'orange' },
  unknown: { text: 'unknown', color: 'text' },
});

const RUN_STATUS = textMapping({
  succeeded: { text: 'succeeded', color: 'green' },
  failed: { text: 'failed', color: 'red' },
  skipped: { text: 'skipped (another replica held the lock)', color: 'blue' },
  running: { text: 'running', color: 'blue' },
});

const SEVERITY_COLOURS: ReadonlyArray<readonly [string, string]> = [
  ['critical', 'dark-red'],
  ['high', 'red'],
  ['medium', 'orange'],
  ['low', 'text'],
];

/** Bars per time bucket, one series per value column. */
function bars(panel: TimeSeries): TimeSeries {
  return panel
    .drawStyle(GraphDrawStyle.Bars)
    .barAlignment(BarAlignment.Center)
    .fillOpacity(80)
    .lineWidth(1)
    .stacking(new StackingConfigBuilder().mode(StackingMode.Normal))
    .legend(
      new VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(LegendDisplayMode.List)
        .placement(LegendPlacement.Bottom)
        .calcs(['sum']),
    )
    .min(0)
    .decimals(0)
    .interval('1d');
}

/** The tool-approval state of a settings row, as the tool-approval panels name it. */
const TOOL_APPROVAL_STATE = `case
             when is_deleted then 'deleted'
             when require_tool_approval then 'required'
             when not require_tool_approval then 'off'
             else 'unknown'
           end`;

/** The same state of a setting_periods row, whose value is JSON. */
const PERIOD_STATE = `case
             when is_deleted then 'deleted'
             when value = 'true' then 'required'
             when value = 'false' then 'off'
             else 'unknown'
           end`;

function panels(): Array<cog.Builder<Panel> | RowBuilder> {
  return [
    new RowBuilder('Posture now'),
    new Stat()
      .title('Tool approval')
      .description(
        'Whether tools need approval before they run (requireToolApproval), in the settings in force now (settings_current).',
      )
      .withTarget(
        sql(`
          select ${TOOL_APPROVAL_STATE} as tool_approval
          from govtrail.settings_current
          where tenant_id = '$tenant'
        `),
      )
      .reduceOptions(field('tool_approval'))
      .mappings([TOOL_APPROVAL_STATES])
      .colorMode(BigValueColorMode.Background)
      .graphMode(BigValueGraphMode.None)
      .textMode(BigValueTextMode.Value)
      .noValue('no settings stored')
      .span(4)
      .height(8),
    new Stat()
      .title('Settings last changed')
      .description('When the settings in force now were written (settings_current).')
      .withTarget(
        sql(`
          select extract(epoch from valid_from) * 1000 as last_changed_at
          from govtrail.settings_current
          where tenant_id = '$tenant'
        `),
      )
      .reduceOptions(field('last_changed_at'))
      .unit('dateTimeFromNow')
      .colorMode(BigValueColorMode.None)
      .graphMode(BigValueGraphMode.None)
      .textMode(BigValueTextMode.Value)
      .span(4)
      .height(8),
    new Table()
      .title('Current settings')
      .description(
        'Every governance setting and its effective value now: the row of posture_daily for today (UTC). Durations in seconds, [] = all client types.',
      )
      .withTarget(
        sql(`
          select setting, value_text as value, loosened as loosened_today
          from govtrail.posture_daily
          where tenant_id = '$tenant' and day_start = date_trunc('day', now(), 'UTC')
          order by setting
        `),
      )
      .withTransformation(
        organize([
          ['setting', 'Setting'],
          ['value', 'Value'],
          ['loosened_today', 'Loosened today'],
        ]),
      )
      .span(8)
      .height(8),
    new BarChart()
      .title('Where governance loosened')
      .description(
        'Loosening and tightening changes per setting over the time range, from the daily rollup posture_daily.',
      )
      .withTarget(
        sql(`
          select setting, sum(loosened) as loosened, sum(tightened) as tightened
          from govtrail.posture_daily
          where tenant_id = '$tenant' and $__timeFilter(day_start)
          group by setting
          order by sum(loosened) desc, setting
        `),
      )
      .xField('setting')
      .orientation(VizOrientation.Horizontal)
      .showValue(VisibilityMode.Auto)
      .stacking(StackingMode.None)
      .overrideByName('loosened', [color('red'), displayName('loosened')])
      .overrideByName('tightened', [color('green'), displayName('tightened')])
      .span(8)
      .height(8),

    new RowBuilder('Changes'),
    bars(new TimeSeries())
      .title('Loosening vs tightening changes')
      .description(
        'Field changes that weakened governance (loosened) and that strengthened it (tightened), per day or longer bucket (the daily rollup posture_daily; change_log has each one).',
      )
      .withTarget(
        series(`
          select $__timeGroupAlias(day_start, $__interval),
                 sum(loosened) as loosened,
                 sum(tightened) as tightened
          from govtrail.posture_daily
          where tenant_id = '$tenant' and $__timeFilter(day_start)
          group by 1
          order by 1
        `),
      )
      .overrideByName('loosened', [color('red')])
      .overrideByName('tightened', [color('green')])
      .span(24)
      .height(8),
    new Stat()
      .title('Changes without a ticket')
      .description(
        'History entries in the time range with no TICKET annotation, leaving out those made by a workflow or an automation (changes_without_ticket).',
      )
      .withTarget(
        sql(`
          select count(*) as changes_without_ticket
          from govtrail.changes_without_ticket
          where tenant_id = '$tenant' and $__timeFilter(changed_at)
        `),
      )
      .reduceOptions(field('changes_without_ticket'))
      .thresholds(
        new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps([
          { value: null, color: 'green' },
          { value: 1, color: 'orange' },
        ]),
      )
      .colorMode(BigValueColorMode.Background)
      .graphMode(BigValueGraphMode.None)
      .span(4)
      .height(9),
    new Table()
      .title('Changes without a ticket (newest 500)')
      .description(
        'Who changed what without a ticket, newest first, with their reasons (changes_without_ticket).',
      )
      .withTarget(
        sql(`
          select changed_at, change_kind, actor_kind, actor_user_id,
                 array_to_string(fields, ', ') as fields,
                 array_to_string(reasons, '; ') as reasons,
                 entry_id
          from govtrail.changes_without_ticket
          where tenant_id = '$tenant' and $__timeFilter(changed_at)
          order by changed_at desc, entry_id desc
          limit 500
        `),
      )
      .withTransformation(
        organize([
          ['changed_at', 'Changed at'],
          ['change_kind', 'Change'],
          ['actor_kind', 'Actor'],
          ['actor_user_id', 'User'],
          ['fields', 'Fields changed'],
          ['reasons', 'Reasons'],
          ['entry_id', 'Entry'],
        ]),
      )
      .span(20)
      .height(9),

    new RowBuilder('Tool approval'),
    new StateTimeline()
      .title('Tool approval over time')
      .description(
        'requireToolApproval through the time range, one band per period of one value (setting_periods).',
      )
      .withTarget(
        sql(`
          select greatest(valid_from, $__timeFrom()) as time, ${PERIOD_STATE} as tool_approval
          from govtrail.setting_periods('$tenant', 'require_tool_approval', $__timeFrom(), $__timeTo())
          order by valid_from
        `),
      )
      .withTransformation(
        organize([
          ['time', 'Time'],
          ['tool_approval', 'Tool approval'],
        ]),
      )
      .mappings([TOOL_APPROVAL_STATES])
      .showValue(VisibilityMode.Never)
      .span(24)
      .height(5),
    new Table()
      .title('Periods when tool approval was off (newest 500)')
      .description(
        'Each period with requireToolApproval false that overlaps the time range (setting_periods), from the change that turned approval off (even before the range) to the one that ended it; "still off" while it lasts. A deletion of the settings ends a period. Who and which ticket come from change_log.',
      )
      .withTarget(
        sql(`
          select p.valid_from as off_from, p.valid_to as off_until,
                 extract(epoch from coalesce(p.valid_to, now()) - p.valid_from) as off_seconds,
                 concat_ws(' ', c.actor_kind, c.actor_user_id) as turned_off_by,
                 array_to_string(c.tickets, ', ') as tickets,
                 p.entry_id
          from (select * from govtrail.setting_periods('$tenant', 'require_tool_approval', $__timeFrom(), $__timeTo())
                where value = 'false'
                order by valid_from desc
                limit 500) p
          left join govtrail.change_log c
            on c.tenant_id = p.tenant_id and c.entry_id = p.entry_id and c.field = 'require_tool_approval'
          order by p.valid_from desc
        `),
      )
      .withTransformation(
        organize([
          ['off_from', 'Off from'],
          ['off_until', 'Back on at'],
          ['off_seconds', 'Off for'],
          ['turned_off_by', 'Turned off by'],
          ['tickets', 'Tickets'],
          ['entry_id', 'Entry'],
        ]),
      )
      .overrideByName('off_seconds', [unit('s')])
      .overrideByName('off_until', [{ id: 'noValue', value: 'still off' }])
      .span(24)
      .height(8),

    new RowBuilder('Alerts'),
    bars(new TimeSeries())
      .title('Alerts by severity')
      .description(
        'Alerts raised per time bucket and severity, by the time they were raised (alert_log.created_at).',
      )
      .withTarget(
        series(`
          select $__timeGroupAlias(created_at, $__interval),
                 count(*) filter (where severity = 'critical') as critical,
                 count(*) filter (where severity = 'high') as high,
                 count(*) filter (where severity = 'medium') as medium,
                 count(*) filter (where severity = 'low') as low
          from govtrail.alert_log
          where tenant_id = '$tenant' and $__timeFilter(created_at)
          group by 1
          order by 1
        `),
      )
      .overrides(
        SEVERITY_COLOURS.map(([s, c]) => ({ matcher: { id: 'byName', options: s }, properties: [color(c)] })),
      )
      .span(12)
      .height(8),
    new Table()
      .title('Alerts by rule')
      .description('How many alerts each rule raised in the time range, most severe first (alert_log).')
      .withTarget(
        sql(`
          select rule_id, max(title) as title, severity, count(*) as alerts, max(created_at) as last_raised_at
          from govtrail.alert_log
          where tenant_id = '$tenant' and $__timeFilter(created_at)
          group by rule_id, severity
          order by array_position(array['critical', 'high', 'medium', 'low'], severity), count(*) desc, rule_id
        `),
      )
      .withTransformation(
        organize([
          ['rule_id', 'Rule'],
          ['title', 'Title'],
          ['severity', 'Severity'],
          ['alerts', 'Alerts'],
          ['last_raised_at', 'Last raised'],
        ]),
      )
      .overrideByName('severity', [
        {
          id: 'mappings',
          value: [
            textMapping(Object.fromEntries(SEVERITY_COLOURS.map(([s, c]) => [s, { text: s, color: c }]))),
          ],
        },
        { id: 'custom.cellOptions', value: { type: 'color-text' } },
      ])
      .span(12)
      .height(8),

    new RowBuilder('Exporter health'),
    new Stat()
      .title('Since the last successful sync')
      .description(
        'Time since the last sync of this tenant that succeeded (exporter_health.seconds_since_success).',
      )
      .withTarget(
        sql(`
          select seconds_since_success
          from govtrail.exporter_health
          where tenant_id = '$tenant'
        `),
      )
      .reduceOptions(field('seconds_since_success'))
      .unit('s')
      .thresholds(
        new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps([
          { value: null, color: 'green' },
          { value: 3600, color: 'orange' },
          { value: 86_400, color: 'red' },
        ]),
      )
      .colorMode(BigValueColorMode.Background)
      .graphMode(BigValueGraphMode.None)
      .noValue('never succeeded')
      .span(4)
      .height(6),
    new Stat()
      .title('Last sync')
      .description('Status of the latest sync run (exporter_health); the failed-runs table has the errors.')
      .withTarget(
        sql(`
          select last_run_status
          from govtrail.exporter_health
          where tenant_id = '$tenant'
        `),
      )
      .reduceOptions(field('last_run_status'))
      .mappings([RUN_STATUS])
      .colorMode(BigValueColorMode.Background)
      .graphMode(BigValueGraphMode.None)
      .span(4)
      .height(6),
    new Stat()
      .title('Failed runs')
      .description('Sync and reconcile runs that failed in the time range (run_log).')
      .withTarget(
        sql(`
          select count(*) as failed_runs
          from govtrail.run_log
          where tenant_id = '$tenant' and status = 'failed' and $__timeFilter(started_at)
        `),
      )
      .reduceOptions(field('failed_runs'))
      .thresholds(
        new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps([
          { value: null, color: 'green' },
          { value: 1, color: 'red' },
        ]),
      )
      .colorMode(BigValueColorMode.Background)
      .graphMode(BigValueGraphMode.None)
      .span(4)
      .height(6),
    bars(new TimeSeries())
      .title('Sync runs by status')
      .description('Sync runs per time bucket by outcome (run_log, kind sync).')
      .withTarget(
        series(`
          select $__timeGroupAlias(started_at, $__interval),
                 count(*) filter (where status = 'succeeded') as succeeded,
                 count(*) filter (where status = 'failed') as failed,
                 count(*) filter (where status = 'skipped') as skipped
          from govtrail.run_log
          where tenant_id = '$tenant' and kind = 'sync' and $__timeFilter(started_at)
          group by 1
          order by 1
        `),
      )
      .interval('1h')
      .overrideByName('succeeded', [color('green')])
      .overrideByName('failed', [color('red')])
      .overrideByName('skipped', [color('blue')])
      .span(12)
      .height(6),
    new Table()
      .title('Failed runs (newest 100)')
      .description(
        'Each failed sync or reconcile in the time range with its error code and message (run_log).',
      )
      .withTarget(
        sql(`
          select started_at, kind, trigger, error_code, error_message, run_id
          from govtrail.run_log
          where tenant_id = '$tenant' and status = 'failed' and $__timeFilter(started_at)
          order by started_at desc, run_id desc
          limit 100
        `),
      )
      .withTransformation(
        organize([
          ['started_at', 'Started at'],
          ['kind', 'Kind'],
          ['trigger', 'Trigger'],
          ['error_code', 'Error code'],
          ['error_message', 'Error'],
          ['run_id', 'Run'],
        ]),
      )
      .span(24)
      .height(6),

    new RowBuilder('Source integrity'),
    new Stat()
      .title('Last reconcile')
      .description(
        'When the latest reconcile (the whole source history compared with the store) finished (exporter_health).',
      )
      .withTarget(
        sql(`
          select extract(epoch from last_reconcile_at) * 1000 as last_reconcile_at
          from govtrail.exporter_health
          where tenant_id = '$tenant'
        `),
      )
      .reduceOptions(field('last_reconcile_at'))
      .unit('dateTimeFromNow')
      .colorMode(BigValueColorMode.None)
      .graphMode(BigValueGraphMode.None)
      .noValue('never reconciled')
      .span(4)
      .height(8),
    new Stat()
      .title('Store last shown equal to the source')
      .description(
        'When the latest successful reconcile finished: the date the stored history was last proven against the source (exporter_health.last_verified_at).',
      )
      .withTarget(
        sql(`
          select extract(epoch from last_verified_at) * 1000 as last_verified_at
          from govtrail.exporter_health
          where tenant_id = '$tenant'
        `),
      )
      .reduceOptions(field('last_verified_at'))
      .unit('dateTimeFromNow')
      .colorMode(BigValueColorMode.None)
      .graphMode(BigValueGraphMode.None)
      .noValue('not checked')
      .span(4)
      .height(8),
    new BarChart()
      .title('Open discrepancies by kind')
      .description(
        'What the latest successful reconcile found to hold, plus rewrites found by syncs since (exporter_health.open_*). 0 with no reconcile means "not checked".',
      )
      .withTarget(
        sql(`
          select v.kind, v.open
          from govtrail.exporter_health h
          cross join lateral (values
            ('changed_at_source', h.open_changed_at_source),
            ('missing_at_source', h.open_missing_at_source),
            ('expired_at_source', h.open_expired_at_source),
            ('backdated', h.open_backdated),
            ('conflicting_ids', h.open_conflicting_ids)) v(kind, open)
          where h.tenant_id = '$tenant'
        `),
      )
      .xField('kind')
      .showValue(VisibilityMode.Always)
      .overrideByName('open', [color('orange'), displayName('open')])
      .min(0)
      .decimals(0)
      .span(8)
      .height(8),
    new Table()
      .title('Discrepancies found (newest 500)')
      .description(
        'Findings recorded in the time range: entries the source rewrote, dropped, expired or backdated (source_discrepancy).',
      )
      .withTarget(
        sql(`
          select detected_at, kind, entry_id, entry_created_at, run_id
          from govtrail.source_discrepancy
          where tenant_id = '$tenant' and $__timeFilter(detected_at)
          order by detected_at desc, discrepancy_id desc
          limit 500
        `),
      )
      .withTransformation(
        organize([
          ['detected_at', 'Detected at'],
          ['kind', 'Kind'],
          ['entry_id', 'Entry'],
          ['entry_created_at', 'Entry created at'],
          ['run_id', 'Run'],
        ]),
      )
      .span(8)
      .height(8),
    // The row that reads every tenant (FLEET_PANELS): the fleet as the replicas serve it.
    new RowBuilder('Fleet'),
    new Table()
      .title('Freshness by tenant')
      .description(
        'Every tenant with the time since its last successful sync and its last run, stalest first (exporter_health). The same figure per tenant is the metric govtrail_tenant_freshness_seconds.',
      )
      .withTarget(
        sql(`
          select tenant_id, seconds_since_success, last_run_status, last_success_at
          from govtrail.exporter_health
          order by seconds_since_success desc nulls first, tenant_id
        `),
      )
      .withTransformation(
        organize([
          ['tenant_id', 'Tenant'],
          ['seconds_since_success', 'Since last success'],
          ['last_run_status', 'Last run'],
          ['last_success_at', 'Last success at'],
        ]),
      )
      .span(12)
      .height(8),
    new Table()
      .title('Stalest tenants (10)')
      .description(
        'The ten tenants whose last successful sync is oldest, never-synced first (exporter_health).',
      )
      .withTarget(
        sql(`
          select tenant_id, seconds_since_success, last_error
          from govtrail.exporter_health
          order by seconds_since_success desc nulls first, tenant_id
          limit 10
        `),
      )
      .withTransformation(
        organize([
          ['tenant_id', 'Tenant'],
          ['seconds_since_success', 'Since last success'],
          ['last_error', 'Last error'],
        ]),
      )
      .span(12)
      .height(8),
    bars(new TimeSeries())
      .title('Fleet failures')
      .description(
        'Failed sync and reconcile runs of every tenant per time bucket (run_log). With the worker, a failure retried inside its slot counts once.',
      )
      .withTarget(
        series(`
          select $__timeGroupAlias(started_at, $__interval),
                 count(*) filter (where kind = 'sync') as sync_failed,
                 count(*) filter (where kind = 'reconcile') as reconcile_failed
          from govtrail.run_log
          where status = 'failed' and $__timeFilter(started_at)
          group by 1
          order by 1
        `),
      )
      .interval('1h')
      .overrideByName('sync_failed', [color('red')])
      .overrideByName('reconcile_failed', [color('orange')])
      .span(24)
      .height(6),
    ...complianceRow(),
    // Appended after the fleet so that the ids of the panels above stay as they were.
    new RowBuilder('Alert handling'),
    new Table()
      .title('Open alerts by age and severity')
      .description(
        'Alerts not yet resolved (open, acknowledged or snoozed), by severity and by how long ago they were raised (alert_state).',
      )
      .withTarget(
        sql(`
          select severity,
                 count(*) filter (where now() - created_at < interval '1 hour') as under_1h,
                 count(*) filter (where now() - created_at >= interval '1 hour'
                                    and now() - created_at < interval '1 day') as from_1h_to_1d,
                 count(*) filter (where now() - created_at >= interval '1 day'
                                    and now() - created_at < interval '7 days') as from_1d_to_7d,
                 count(*) filter (where now() - created_at >= interval '7 days') as over_7d,
                 count(*) filter (where state = 'acknowledged') as acknowledged,
                 count(*) filter (where state = 'snoozed') as snoozed,
                 count(*) as unresolved
          from govtrail.alert_state
          where tenant_id = '$tenant' and state <> 'resolved'
          group by severity
          order by array_position(array['critical', 'high', 'medium', 'low'], severity)
        `),
      )
      .withTransformation(
        organize([
          ['severity', 'Severity'],
          ['under_1h', '< 1 h'],
          ['from_1h_to_1d', '1 h – 1 d'],
          ['from_1d_to_7d', '1 – 7 d'],
          ['over_7d', '> 7 d'],
          ['acknowledged', 'Acknowledged'],
          ['snoozed', 'Snoozed'],
          ['unresolved', 'Unresolved'],
        ]),
      )
      .span(12)
      .height(8),
    new Stat()
      .title('Median time to acknowledge')
      .description(
        'Median time from an alert being raised to its acknowledgement, for the alerts raised in the time range that were acknowledged (alert_state).',
      )
      .withTarget(
        sql(`
          select extract(epoch from percentile_cont(0.5) within group (order by acknowledged_at - created_at))
                   as time_to_acknowledge
          from govtrail.alert_state
          where tenant_id = '$tenant' and $__timeFilter(created_at) and acknowledged_at is not null
        `),
      )
      .reduceOptions(field('time_to_acknowledge'))
      .unit('s')
      .noValue('none acknowledged')
      .colorMode(BigValueColorMode.None)
      .graphMode(BigValueGraphMode.None)
      .span(6)
      .height(8),
    new Stat()
      .title('Median time to resolve')
      .description(
        'Median time from an alert being raised to its resolve, by hand or automatically, for the alerts raised in the time range that are resolved (alert_state).',
      )
      .withTarget(
        sql(`
          select extract(epoch from percentile_cont(0.5) within group (order by resolved_at - created_at))
                   as time_to_resolve
          from govtrail.alert_state
          where tenant_id = '$tenant' and $__timeFilter(created_at) and state = 'resolved'
        `),
      )
      .reduceOptions(field('time_to_resolve'))
      .unit('s')
      .noValue('none resolved')
      .colorMode(BigValueColorMode.None)
      .graphMode(BigValueGraphMode.None)
      .span(6)
      .height(8),
  ];
}

/** The status of a control (control_period), as the compliance panels show it. */
const CONTROL_STATUS = textMapping({
  pass: { text: 'pass', color: 'green' },
  fail: { text: 'FAIL', color: 'red' },
  excepted: { text: 'excepted', color: 'blue' },
  deleted: { text: 'settings deleted', color: 'dark-red' },
  unknown: { text: 'unknown', color: 'text' },
});

/**
 * Conformance to the tenant's baseline (docs/design/conformance.md): how much of the range the
 * tenant was compliant, what fails now, and every control's status through the range. Last, so
 * that the ids of the panels above stay what they were.
 */
function complianceRow(): Array<cog.Builder<Panel> | RowBuilder> {
  return [
    new RowBuilder('Compliance'),
    new Stat()
      .title('Compliant over the range')
      .description(
        "The share of the time range in which the controls of the tenant's baseline were met (pass, or excepted by an exception in force), averaged over controls and days (compliance_daily). Time before the first stored snapshot is unknown and not counted as compliant.",
      )
      .withTarget(
        sql(`
          select avg(compliant_share) as compliant
          from govtrail.compliance_daily
          where tenant_id = '$tenant' and $__timeFilter(day_start)
        `),
      )
      .reduceOptions(field('compliant'))
      .unit('percentunit')
      .decimals(1)
      .min(0)
      .max(1)
      .thresholds(
        new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps([
          { value: null, color: 'red' },
          { value: 0.9, color: 'orange' },
          { value: 0.99, color: 'green' },
        ]),
      )
      .colorMode(BigValueColorMode.Background)
      .graphMode(BigValueGraphMode.None)
      .span(6)
      .height(5),
    new Stat()
      .title('Controls failing now')
      .description(
        'How many controls of the baseline fail now: status fail, or deleted when the settings were hard-deleted (control_status_current).',
      )
      .withTarget(
        sql(`
          select count(*) filter (where status in ('fail', 'deleted')) as failing
          from govtrail.control_status_current
          where tenant_id = '$tenant'
        `),
      )
      .reduceOptions(field('failing'))
      .decimals(0)
      .thresholds(
        new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps([
          { value: null, color: 'green' },
          { value: 1, color: 'red' },
        ]),
      )
      .colorMode(BigValueColorMode.Background)
      .graphMode(BigValueGraphMode.None)
      .span(6)
      .height(5),
    new Table()
      .title('Controls failing now')
      .description(
        'Each control that fails now, since when, and the change that made it fail: its actor and ticket (control_status_current).',
      )
      .withTarget(
        sql(`
          select control_id, status, since,
                 concat_ws(' ', actor_kind, actor_user_id) as changed_by, ticket, value::text as value, entry_id
          from govtrail.control_status_current
          where tenant_id = '$tenant' and status in ('fail', 'deleted')
          order by control_id
        `),
      )
      .withTransformation(
        organize([
          ['control_id', 'Control'],
          ['status', 'Status'],
          ['since', 'Since'],
          ['changed_by', 'Changed by'],
          ['ticket', 'Ticket'],
          ['value', 'Value'],
          ['entry_id', 'Entry'],
        ]),
      )
      .overrideByName('status', [
        { id: 'mappings', value: [CONTROL_STATUS] },
        { id: 'custom.cellOptions', value: { type: 'color-text' } },
      ])
      .span(12)
      .height(5),
    new StateTimeline()
      .title('Control status over time')
      .description(
        'Every control of the baseline through the time range, one band per period of one status (control_period): pass, FAIL, excepted (an exception in force accepts the value), settings deleted.',
      )
      .withTarget(
        sql(`
          select greatest(valid_from, $__timeFrom()) as time, control_id, status
          from govtrail.control_period
          where tenant_id = '$tenant' and valid_from <= least($__timeTo(), now())
            and (valid_to is null or valid_to > $__timeFrom())
          order by control_id, valid_from
        `),
      )
      .withTransformation(
        organize([
          ['time', 'time'],
          ['control_id', 'control_id'],
          ['status', 'status'],
        ]),
      )
      // One band per control: the long rows are split by control_id, each named by it.
      .withTransformation({ id: 'partitionByValues', options: { fields: ['control_id'], keepFields: false } })
      .mappings([CONTROL_STATUS])
      .showValue(VisibilityMode.Never)
      .span(24)
      .height(8),
    bars(new TimeSeries())
      .title('Compliance per day')
      .description(
        'The share of each day the controls were compliant (pass or excepted), failing (fail or deleted) or unknown, averaged over controls (compliance_daily).',
      )
      .withTarget(
        series(`
          select $__timeGroupAlias(day_start, $__interval),
                 avg(compliant_share) as compliant,
                 avg(fail_share + deleted_share) as failing,
                 avg(unknown_share) as unknown
          from govtrail.compliance_daily
          where tenant_id = '$tenant' and $__timeFilter(day_start)
          group by 1
          order by 1
        `),
      )
      .unit('percentunit')
      .decimals(1)
      .max(1)
      .overrideByName('compliant', [color('green')])
      .overrideByName('failing', [color('red')])
      .overrideByName('unknown', [color('text')])
      .span(12)
      .height(7),
    new Table()
      .title('Compliance by tenant')
      .description(
        'Every tenant judged by a baseline: its share of the time range compliant and failing, and how many controls fail now (compliance_daily, control_status_current).',
      )
      .withTarget(
        sql(`
          select d.tenant_id, avg(d.compliant_share) as compliant,
                 avg(d.fail_share + d.deleted_share) as failing,
                 (select count(*) from govtrail.control_status_current c
                  where c.tenant_id = d.tenant_id and c.status in ('fail', 'deleted')) as failing_now
          from govtrail.compliance_daily d
          where $__timeFilter(d.day_start)
          group by d.tenant_id
          order by compliant, d.tenant_id
        `),
      )
      .withTransformation(
        organize([
          ['tenant_id', 'Tenant'],
          ['compliant', 'Compliant'],
          ['failing', 'Failing'],
          ['failing_now', 'Controls failing now'],
        ]),
      )
      .overrideByName('compliant', [unit('percentunit')])
      .overrideByName('failing', [unit('percentunit')])
      .span(12)
      .height(7),
  ];
}

/** Titles of the panels that read every tenant, not the one `$tenant` names: the Fleet row's, and one of the Compliance row. */
export const FLEET_PANELS: readonly string[] = [
  'Freshness by tenant',
  'Stalest tenants (10)',
  'Fleet failures',
  'Compliance by tenant',
];

/** The dashboard, as Grafana's JSON model. */
export function buildDashboard(): Dashboard {
  const builder = new DashboardBuilder('govtrail — AI governance settings')
    .uid('govtrail')
    .description(
      "Posture, changes, alerts, exporter health and source integrity of a tenant's AI governance settings, from govtrail's views (docs/dashboards.md).",
    )
    .tags(['govtrail', 'governance', 'audit'])
    .time({ from: 'now-1y', to: 'now' })
    .timezone('utc')
    .refresh('5m')
    .tooltip(DashboardCursorSync.Crosshair)
    .readonly()
    .withVariable(
      new DatasourceVariableBuilder('datasource')
        .label('Data source')
        .type(DATASOURCE_TYPE)
        .current({ text: 'govtrail', value: DATASOURCE_UID }),
    )
    .withVariable(
      new QueryVariableBuilder('tenant')
        .label('Tenant')
        .datasource(DATASOURCE)
        .query('select tenant_id from govtrail.exporter_health order by tenant_id')
        .definition('select tenant_id from govtrail.exporter_health order by tenant_id')
        .refresh(VariableRefresh.OnDashboardLoad)
        .sort(VariableSort.AlphabeticalAsc),
    );
  for (const p of panels()) {
    if (p instanceof RowBuilder) builder.withRow(p);
    else builder.withPanel(p);
  }
  const built = builder.build();
  // Stable panel ids (links and `viewPanel=` use them), in layout order; every data panel on the
  // chosen data source, as its query is.
  let id = 1;
  for (const p of built.panels ?? []) {
    const panel = p as { id?: number; type: string; datasource?: unknown };
    panel.id = id++;
    if (panel.type !== 'row') panel.datasource = DATASOURCE;
  }
  return built;
}

/** One SQL query of a dashboard: a panel's target, or the query of a template variable. */
export interface DashboardQuery {
  /** `panel <id> <title>` or `variable <name>`. */
  readonly name: string;
  /** Panel type (`stat`, `table`, …), or `variable`. */
  readonly kind: string;
  readonly format: Format;
  readonly rawSql: string;
  /** The panel's minimum interval (`1d`), which bounds `$__interval`. */
  readonly minInterval: string | undefined;
  /** The panel (or variable) as it is in the JSON. */
  readonly source: Record<string, unknown>;
}

type Json = Record<string, unknown>;

/** Every SQL query of a dashboard JSON model (panels inside collapsed rows included), in layout order. */
export function dashboardQueries(model: unknown): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  const d = model as Json;
  const variables = ((d['templating'] as Json | undefined)?.['list'] as Json[] | undefined) ?? [];
  for (const v of variables) {
    if (v['type'] !== 'query') continue;
    const q = v['query'];
    const rawSql = typeof q === 'string' ? q : String((q as Json | undefined)?.['rawSql'] ?? '');
    out.push({
      name: `variable ${String(v['name'])}`,
      kind: 'variable',
      format: 'table',
      rawSql,
      minInterval: undefined,
      source: v,
    });
  }
  const visit = (panels: Json[]): void => {
    for (const p of panels) {
      if (p['type'] === 'row') {
        visit((p['panels'] as Json[] | undefined) ?? []);
        continue;
      }
      for (const t of (p['targets'] as Json[] | undefined) ?? []) {
        if (typeof t['rawSql'] !== 'string') continue;
        out.push({
          name: `panel ${String(p['id'])} ${String(p['title'])}`,
          kind: String(p['type']),
          format: t['format'] === 'time_series' ? 'time_series' : 'table',
          rawSql: t['rawSql'],
          minInterval: typeof p['interval'] === 'string' ? p['interval'] : undefined,
          source: p,
        });
      }
    }
  };
  visit((d['panels'] as Json[] | undefined) ?? []);
  return out;
}

/** The file's text: the dashboard as indented JSON with a final newline. */
export function renderDashboard(): string {
  return `${JSON.stringify(buildDashboard(), null, 2)}\n`;
}

function main(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const file = path.join(root, DASHBOARD_FILE);
  const text = renderDashboard();
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(file, 'utf8');
    } catch {
      // A missing file differs.
    }
    if (committed !== text) {
      console.error(`${DASHBOARD_FILE} is not what scripts/dashboard.ts generates: run npm run dashboard`);
      process.exit(1);
    }
    console.log(`${DASHBOARD_FILE} is up to date`);
    return;
  }
  writeFileSync(file, text);
  console.log(`wrote ${DASHBOARD_FILE}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href)
  main();
