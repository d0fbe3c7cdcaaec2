/**
 * Bounded concurrency without a dependency: `limit` lanes take the next item until none is left.
 * One item's rejection is kept as its result and never stops the other lanes.
 */
export async function runBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
  /** Checked before each item is taken: false leaves the rest untouched (shutdown drains). */
  shouldContinue: () => boolean = () => true,
): Promise<Array<PromiseSettledResult<R> | undefined>> {
  const results: Array<PromiseSettledResult<R> | undefined> = new Array(items.length).fill(undefined);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length && shouldContinue()) {
      const index = next++;
      try {
        results[index] = { status: 'fulfilled', value: await fn(items[index] as T, index) };
      } catch (reason) {
        results[index] = { status: 'rejected', reason };
      }
    }
  };
  const lanes = Math.max(1, Math.min(limit, items.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  return results;
}
