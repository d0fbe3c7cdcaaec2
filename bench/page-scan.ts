/**
 * `npx tsx bench/page-scan.ts [--pages N]`: what reading a history page from its bytes costs
 * (src/core/page-scan.ts) beside parsing it whole as the client does today. N pages (20 by default)
 * of 100 sandbox entries (seed 7: about 1 KB an entry, 7 % of them with non-ASCII text such as
 * German names and Japanese reasons), each as the sandbox serves it. Prints MB/s and µs per page of the scan, of JSON.parse of the decoded
 * body, and of the scan plus a sha256 of every element's bytes; the sha256s alone for scale. Best of
 * 9 interleaved rounds after a warm-up (the machine's other load touches every kind alike). Numbers
 * only: no assertion.
 */
import { createHash } from 'node:crypto';
import { scanHistoryPage } from '../src/core/page-scan.js';
import { startSandbox } from '../src/sandbox/index.js';

const at = process.argv.indexOf('--pages');
const PAGES = at === -1 ? 20 : Number(process.argv[at + 1]);
const PER_PAGE = 100;

const sandbox = await startSandbox({ entries: PAGES * PER_PAGE, seed: 7, port: 0 });
const lines = [...sandbox.history.jsonLines()];
await sandbox.close();
const bodies: Buffer[] = [];
for (let p = 0; p < PAGES; p++) {
  const list = lines.slice(p * PER_PAGE, (p + 1) * PER_PAGE).join(',');
  bodies.push(Buffer.from(`{"list":[${list}],"nextPageToken":"${p + 1}:39PtDuehhQvg5a0poynnXmPdX9s"}`));
}
const bytes = bodies.reduce((n, b) => n + b.length, 0);
const nonAscii = lines.filter((l) => /[^\x20-\x7e]/.test(l)).length;

// Every variant adds to `sink`, so that none can be optimised away; a page the scan refused would
// make it NaN, or throw.
let sink = 0;
function scan(): void {
  for (const body of bodies) sink += scanHistoryPage(body)?.elements.length ?? Number.NaN;
}
function parse(): void {
  for (const body of bodies) sink += (JSON.parse(body.toString('utf8')) as { list: unknown[] }).list.length;
}
function scanAndHash(): void {
  for (const body of bodies) {
    const page = scanHistoryPage(body);
    if (page === undefined) throw new Error('the scan refused a page');
    for (const e of page.elements)
      sink += createHash('sha256').update(body.subarray(e.start, e.end)).digest()[0]!;
  }
}
/** The hashes alone, over spans found once beforehand: what the scan adds to them. */
const spans = bodies.map((b) => scanHistoryPage(b)?.elements ?? []);
function hashOnly(): void {
  bodies.forEach((body, k) => {
    for (const e of spans[k]!)
      sink += createHash('sha256').update(body.subarray(e.start, e.end)).digest()[0]!;
  });
}

const variants: readonly (readonly [string, () => void])[] = [
  ['scanHistoryPage', scan],
  ['JSON.parse(body.toString())', parse],
  ['scanHistoryPage + sha256 each', scanAndHash],
  ['sha256 each (spans known)', hashOnly],
];
const REPEAT = 10;
for (let w = 0; w < 20; w++) for (const [, f] of variants) f();
const best = variants.map(() => Number.POSITIVE_INFINITY);
for (let r = 0; r < 9; r++) {
  variants.forEach(([, f], k) => {
    const t = performance.now();
    for (let i = 0; i < REPEAT; i++) f();
    best[k] = Math.min(best[k]!, (performance.now() - t) / REPEAT);
  });
}

console.log(
  `${PAGES} pages of ${PER_PAGE} entries: ${(bytes / PAGES / 1024).toFixed(1)} KiB a page, ` +
    `${((100 * nonAscii) / lines.length).toFixed(1)}% of entries with non-ASCII text`,
);
variants.forEach(([name], k) => {
  const ms = best[k]!;
  const mbs = bytes / 1e6 / (ms / 1000);
  const perPage = (ms * 1000) / PAGES;
  console.log(
    `${name.padEnd(32)} ${mbs.toFixed(0).padStart(6)} MB/s ${perPage.toFixed(1).padStart(8)} µs/page`,
  );
});
if (Number.isNaN(sink)) console.log(sink);
