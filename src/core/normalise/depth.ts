/**
 * How deep an entry nests, measured without overflowing the stack (recursion that stops one level
 * past the limit). The copy of an entry is written and hashed by recursive code (canonical JSON, JSON.stringify, jsonb); an entry nested thousands of levels
 * deep would overflow the stack there and fail every run. Such an entry is rejected instead
 * (rejected_entry, with its reason), its too-deep parts replaced by a marker. Pure.
 */

/**
 * The deepest nesting of arrays and objects an entry may have. Documented entries (docs/design/tenant-api.md)
 * nest about five levels; 256 leaves room for any unknown field while keeping the recursive writers far from
 * the stack limit (thousands of levels).
 */
export const MAX_ENTRY_DEPTH = 256;

/**
 * The largest limit nestsDeeperThan recurses to: its recursion stops one level past the limit,
 * whatever the value's depth, so the stack stays far from its own limit (thousands of levels).
 */
const RECURSION_LIMIT = 1024;

/** Whether `value` nests arrays and objects more than `limit` levels deep. Any depth. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  // Every served entry is checked: recursion allocates nothing, where a stack of its own allocated
  // two arrays an entry and a slot a nested value (young garbage the collector pays for).
  return limit <= RECURSION_LIMIT ? deeper(value, 1, limit) : deeperIterative(value, limit);
}

/** Whether `value`, at `depth`, or anything in it is deeper than `limit`. Recurses at most `limit` + 1 levels. */
function deeper(value: object, depth: number, limit: number): boolean {
  if (depth > limit) return true;
  if (Array.isArray(value)) {
    for (const v of value)
      if (v !== null && typeof v === 'object' && deeper(v, depth + 1, limit)) return true;
  } else {
    for (const k in value) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== null && typeof v === 'object' && deeper(v, depth + 1, limit)) return true;
    }
  }
  return false;
}

/** nestsDeeperThan for a limit too large to recurse to: a stack of its own. */
function deeperIterative(value: object, limit: number): boolean {
  const nodes: object[] = [value];
  const depths: number[] = [1];
  for (let top = nodes.pop(); top !== undefined; top = nodes.pop()) {
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    if (Array.isArray(top)) {
      for (const v of top) {
        if (v !== null && typeof v === 'object') {
          nodes.push(v);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const k in top) {
        const v = (top as Record<string, unknown>)[k];
        if (v !== null && typeof v === 'object') {
          nodes.push(v);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/** The reason a too-deep entry is rejected with. */
export function tooDeepReason(limit: number = MAX_ENTRY_DEPTH): string {
  return `nested more than ${limit} levels deep: kept here with the deeper parts replaced by "${tooDeepMarker(limit)}"`;
}

function tooDeepMarker(limit: number): string {
  return `[nested deeper than ${limit} levels: not kept]`;
}

/**
 * `value` with every array or object below `limit` levels replaced by a marker string, so that it
 * can be stored and hashed. Recursion is bounded by `limit`.
 */
export function pruneDeeperThan(value: unknown, limit: number = MAX_ENTRY_DEPTH): unknown {
  return prune(value, 1, limit);
}

function prune(value: unknown, depth: number, limit: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > limit) return tooDeepMarker(limit);
  if (Array.isArray(value)) return value.map((v) => prune(v, depth + 1, limit));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // defineProperty, not assignment: a key "__proto__" (JSON.parse makes it an own key) would
    // otherwise set the copy's prototype and vanish from what is stored.
    Object.defineProperty(out, k, {
      value: prune(v, depth + 1, limit),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
