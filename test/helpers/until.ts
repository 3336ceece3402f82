/**
 * The one bounded wait of the test suite (benchmarks use it too): resolves with the first truthy
 * value `check` returns, polling on macrotasks so I/O and timers of the code under test run in
 * between; fails naming `what` after `timeoutMs`.
 */
export async function until<T>(check: () => T | Promise<T>, what = 'condition', timeoutMs = 5_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
