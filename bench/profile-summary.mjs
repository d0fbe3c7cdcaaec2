/**
 * `node bench/profile-summary.mjs FILE.cpuprofile [TOP]`: a V8 CPU profile summarised: time by
 * category of the hot path (the innermost matching frame of each sample decides), then the
 * functions by self time and by inclusive time. Samples are wall-clock: a process descheduled on a
 * busy machine counts its waits against what it was running, so read shares, not seconds.
 */
import fs from 'node:fs';

const file = process.argv[2];
const top = Number(process.argv[3] ?? 30);
const p = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n) =>
  `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*\/(node_modules\/)?/, '')}:${n.callFrame.lineNumber + 1}`;

/** Categories by frame: the innermost frame that matches one decides (order breaks ties in a frame). */
const CATEGORIES = [
  ['idle', /^\(idle\)/],
  ['gc', /^\(garbage collector\)/],
  ['page JSON.parse + checks', /^parseHistoryPage /],
  ['depth check', /^nestsDeeperThan /],
  ['key + group served', /^(entryKeyOf|groupServed) /],
  ['content/row hash', /^(rowHashOfText|contentHashOfText|contentHash) /],
  ['canonical JSON', /^(canonicalJsonbText|canonicalJson) /],
  ['normalise', /^normaliseEntry /],
  ['walk: diff', /^diffSnapshots /],
  ['walk: rules', /^firingRuleIds /],
  ['walk: other', /^(add|drain|held|storedPosition|jsonbKeepsAsIs|inserted) .*(backfill-walk|changes)\.js/],
  ['field_change rows', /^insertFieldChanges /],
  ['COPY encode', /^(row|encodeCopyValue|streamRows|entryRows|annotationRows|snapshotRows|encodeCopyRows) /],
  ['socket write', /^(writeGeneric|Socket\._write|writev|handleWriteReq) /],
];
/** Asked only when no frame of the sample matches a category above. */
const FALLBACK = [
  ['http (undici)', /(undici|client-h1|#fetchHistoryPage)/],
  ['pg protocol', /(pg-protocol|pg\/lib|pg-copy-streams)/],
  ['other app (dist/src)', /dist\/src\//],
];

function categorise(id) {
  for (const list of [CATEGORIES, FALLBACK]) {
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      const s = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url}`;
      for (const [cat, re] of list) if (re.test(s)) return cat;
    }
  }
  return 'other (node, V8)';
}

const weight = new Map();
let total = 0;
for (let i = 0; i < p.samples.length; i++) {
  const d = p.timeDeltas[i] ?? 0;
  weight.set(p.samples[i], (weight.get(p.samples[i]) ?? 0) + d);
  total += d;
}
const self = new Map();
const incl = new Map();
const cats = new Map();
for (const [id, t] of weight) {
  const k = name(byId.get(id));
  self.set(k, (self.get(k) ?? 0) + t);
  const c = categorise(id);
  cats.set(c, (cats.get(c) ?? 0) + t);
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const kk = name(byId.get(cur));
    if (seen.has(kk)) continue;
    seen.add(kk);
    incl.set(kk, (incl.get(kk) ?? 0) + t);
  }
}
const busy = total - (cats.get('idle') ?? 0);
const ms = (x) => (x / 1000).toFixed(0).padStart(6);
const pct = (x) => `${((100 * x) / busy).toFixed(1).padStart(5)} %`;
console.log(`profile ${ms(total)} ms, of which busy ${ms(busy)} ms`);
console.log('--- by category (share of busy)');
for (const [k, t] of [...cats].sort((a, b) => b[1] - a[1])) if (k !== 'idle') console.log(ms(t), pct(t), k);
console.log('--- self');
for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(ms(t), pct(t), k);
console.log('--- inclusive');
for (const [k, t] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(ms(t), pct(t), k);
