/** "did you mean": the known name closest to a misspelt one, by edit distance. Pure. */

/** The candidate closest to `name` within `tolerance` edits (a short name: one), if any. */
export function closest(name: string, candidates: readonly string[], tolerance: number): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const allowed = name.length < 8 ? Math.min(1, tolerance) : tolerance;
  const lower = name.toLowerCase();
  for (const c of candidates) {
    // Each edit changes the length by one at most: a candidate whose length differs by more than
    // the edits allowed cannot be close, and is not measured (a start compares every variable of
    // the environment with every setting: 50 ms when all were measured).
    if (Math.abs(c.length - name.length) > allowed) continue;
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= allowed ? best : undefined;
}

/** ` (did you mean X?)` for the closest candidate within a few edits, else ''. */
export function suggestion(name: string, candidates: readonly string[]): string {
  const best = closest(name, candidates, Math.max(2, Math.floor(name.length / 4)));
  return best === undefined ? '' : ` (did you mean ${best}?)`;
}

/**
 * Edit distance with insertions, deletions, substitutions and transpositions of two neighbours
 * (`SECERT` → `SECRET` is one edit, as a typist makes it).
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(
        (rows[i - 1]?.[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (rows[i - 1]?.[j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      }
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? 0;
}
