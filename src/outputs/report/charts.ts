/**
 * Inline SVG charts for the report. Pure: data in, markup out; no scripts, no external resources,
 * so the report is one self-contained file that also prints.
 */

import { canonicalJson } from '../../core/diff.js';
import { formatValue, settingInForce } from '../../core/format.js';
import type { TimelineRow } from '../../store/read/views.js';
import { esc } from './escape.js';

export const COLORS = {
  ink: '#1f2933',
  muted: '#64748b',
  grid: '#e5e7eb',
  loosened: '#c8553d',
  tightened: '#2f7d78',
  changed: '#8a9bb0',
  neutralA: '#dde3ea',
  neutralB: '#cfd7e1',
  deleted: '#475569',
  critical: '#8f1d3a',
  high: '#c8553d',
  medium: '#d19a2a',
  low: '#8a9bb0',
} as const;

const DAY = 86_400_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function shortDate(d: Date): string {
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
}

/** Tick positions at UTC midnights, a step that gives at most `max` ticks. */
function ticks(from: Date, to: Date, max: number): Date[] {
  const span = to.getTime() - from.getTime();
  const step = [1, 2, 7, 14, 30, 61, 91, 182, 365].find((d) => span / (d * DAY) <= max) ?? 365;
  const first = Math.ceil(from.getTime() / DAY) * DAY;
  const out: Date[] = [];
  for (let t = first; t <= to.getTime(); t += step * DAY) out.push(new Date(t));
  return out;
}

interface Segment {
  start: number;
  end: number;
  value: unknown;
  deleted: boolean;
  direction: string | undefined;
}

const DELETED = Symbol('deleted');

/** Per field, the periods of constant value, with the direction of the change that began each. */
export function fieldSegments(
  rows: readonly TimelineRow[],
  field: string,
  directions: ReadonlyMap<string, string>,
  from: Date,
  to: Date,
): Segment[] {
  const out: Segment[] = [];
  let prevKey: string | undefined;
  for (const r of rows) {
    const start = Math.max(r.validFrom.getTime(), from.getTime());
    const end = Math.min(r.validTo?.getTime() ?? to.getTime(), to.getTime());
    if (end <= start) continue;
    const value = r.isDeleted ? DELETED : settingInForce(r.settings, field);
    const key = value === DELETED ? '\u0000deleted' : canonicalJson(value ?? null);
    const last = out.at(-1);
    if (last !== undefined && key === prevKey && last.end === start) {
      last.end = end;
      continue;
    }
    out.push({
      start,
      end,
      value,
      deleted: value === DELETED,
      direction: directions.get(`${r.entryId}|${field}`),
    });
    prevKey = key;
  }
  return out;
}

/** One lane per setting across [from, to); loosened periods in the warm colour. */
export function postureTimeline(
  rows: readonly TimelineRow[],
  fields: readonly string[],
  directions: ReadonlyMap<string, string>,
  from: Date,
  to: Date,
): string {
  const width = 1120;
  const labelW = 250;
  const laneH = 24;
  const gap = 7;
  const top = 8;
  const plotW = width - labelW - 10;
  const height = top + fields.length * (laneH + gap) + 26;
  const x = (t: number) => labelW + ((t - from.getTime()) / (to.getTime() - from.getTime())) * plotW;
  const parts: string[] = [];
  parts.push(
    `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#e2e8f0"/><line x1="0" y1="0" x2="0" y2="6" stroke="${COLORS.deleted}" stroke-width="2"/></pattern></defs>`,
  );
  for (const t of ticks(from, to, 9)) {
    const tx = x(t.getTime());
    parts.push(
      `<line x1="${tx.toFixed(1)}" y1="${top - 4}" x2="${tx.toFixed(1)}" y2="${height - 22}" stroke="${COLORS.grid}"/>`,
      `<text x="${tx.toFixed(1)}" y="${height - 8}" text-anchor="middle" class="tick">${esc(shortDate(t))}</text>`,
    );
  }
  fields.forEach((field, i) => {
    const y = top + i * (laneH + gap);
    parts.push(
      `<text x="${labelW - 12}" y="${y + laneH / 2 + 4}" text-anchor="end" class="lane">${esc(field.replaceAll('_', ' '))}</text>`,
    );
    const segs = fieldSegments(rows, field, directions, from, to);
    if (segs.length === 0) {
      parts.push(
        `<rect x="${labelW}" y="${y}" width="${plotW}" height="${laneH}" fill="none" stroke="${COLORS.grid}" stroke-dasharray="3 3"/>`,
      );
    }
    segs.forEach((s, j) => {
      const x0 = x(s.start);
      const w = Math.max(x(s.end) - x0, 1.5);
      const fill = s.deleted
        ? 'url(#hatch)'
        : s.direction === 'loosened'
          ? COLORS.loosened
          : s.direction === 'tightened'
            ? COLORS.tightened
            : j % 2 === 0
              ? COLORS.neutralA
              : COLORS.neutralB;
      const dark = !s.deleted && (s.direction === 'loosened' || s.direction === 'tightened');
      const text = s.deleted ? 'deleted' : formatValue(field, s.value);
      const tip = `${field}: ${text}\n${new Date(s.start).toISOString()} – ${new Date(s.end).toISOString()}${s.direction ? `\n(${s.direction})` : ''}`;
      parts.push(
        `<g><title>${esc(tip)}</title><rect x="${x0.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${laneH}" rx="2" fill="${fill}" stroke="#fff" stroke-width="1"/>`,
      );
      if (w > text.length * 6.3 + 10) {
        parts.push(
          `<text x="${(x0 + 6).toFixed(1)}" y="${y + laneH / 2 + 4}" class="seg" fill="${dark ? '#fff' : COLORS.ink}">${esc(text)}</text>`,
        );
      }
      parts.push('</g>');
    });
  });
  return `<svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="Settings over time">${parts.join('')}</svg>`;
}

/** Stacked bars of field changes per week by direction. */
export function weeklyBars(
  weekly: readonly { week: Date; direction: string; n: number }[],
  from: Date,
  to: Date,
): string {
  const width = 520;
  const height = 220;
  const left = 40;
  const bottom = 26;
  const top = 10;
  const weekMs = 7 * DAY;
  // ISO weeks start on Monday: 1970-01-05 was one.
  const monday = (t: number) => t - ((((t - 4 * DAY) % weekMs) + weekMs) % weekMs);
  const first = monday(from.getTime());
  const count = Math.max(1, Math.ceil((to.getTime() - first) / weekMs));
  const byWeek = new Map<number, Record<string, number>>();
  for (const w of weekly) {
    const k = w.week.getTime();
    const rec = byWeek.get(k) ?? {};
    rec[w.direction] = (rec[w.direction] ?? 0) + w.n;
    byWeek.set(k, rec);
  }
  const max = Math.max(1, ...[...byWeek.values()].map((r) => Object.values(r).reduce((a, b) => a + b, 0)));
  const step = Math.max(1, Math.ceil(max / 4));
  const yMax = step * Math.ceil(max / step);
  const plotW = width - left - 10;
  const plotH = height - top - bottom;
  const band = plotW / count;
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [];
  for (let v = 0; v <= yMax; v += step) {
    parts.push(
      `<line x1="${left}" x2="${width - 10}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="${COLORS.grid}"/>`,
      `<text x="${left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" class="tick">${v}</text>`,
    );
  }
  const labelEvery = Math.ceil(count / 6);
  for (let i = 0; i < count; i++) {
    const t = first + i * weekMs;
    const rec = byWeek.get(t) ?? {};
    let acc = 0;
    const bx = left + i * band + band * 0.15;
    const bw = Math.max(band * 0.7, 1);
    for (const dir of ['loosened', 'tightened', 'changed'] as const) {
      const n = rec[dir] ?? 0;
      if (n === 0) continue;
      const y1 = y(acc + n);
      parts.push(
        `<rect x="${bx.toFixed(1)}" y="${y1.toFixed(1)}" width="${bw.toFixed(1)}" height="${(y(acc) - y1).toFixed(1)}" fill="${COLORS[dir]}"><title>${esc(`week of ${new Date(t).toISOString().slice(0, 10)}: ${n} ${dir}`)}</title></rect>`,
      );
      acc += n;
    }
    if (i % labelEvery === 0) {
      parts.push(
        `<text x="${(left + i * band + band / 2).toFixed(1)}" y="${height - 8}" text-anchor="middle" class="tick">${esc(shortDate(new Date(t)))}</text>`,
      );
    }
  }
  return `<svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="Changes per week by direction">${parts.join('')}</svg>`;
}

/** Horizontal bars of alerts per severity, most severe first. */
export function severityBars(
  alerts: readonly { severity: string; n: number; undelivered: number }[],
): string {
  const levels = ['critical', 'high', 'medium', 'low'] as const;
  const width = 520;
  const rowH = 30;
  const left = 80;
  const height = levels.length * rowH + 6;
  const max = Math.max(1, ...alerts.map((a) => a.n));
  const parts: string[] = [];
  levels.forEach((level, i) => {
    const a = alerts.find((x) => x.severity === level);
    const n = a?.n ?? 0;
    const y = 4 + i * rowH;
    const w = (n / max) * (width - left - 150);
    parts.push(
      `<text x="${left - 10}" y="${y + 16}" text-anchor="end" class="lane">${level}</text>`,
      `<rect x="${left}" y="${y + 3}" width="${Math.max(w, n > 0 ? 2 : 0).toFixed(1)}" height="${rowH - 10}" rx="2" fill="${COLORS[level]}"/>`,
      `<text x="${(left + w + 8).toFixed(1)}" y="${y + 16}" class="num">${n}${a && a.undelivered > 0 ? ` (${a.undelivered} undelivered)` : ''}</text>`,
    );
  });
  return `<svg viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="Alerts by severity">${parts.join('')}</svg>`;
}
