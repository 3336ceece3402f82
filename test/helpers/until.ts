/**
 * The one bounded wait of the test suite: resolves once `check` holds, polling on macrotasks so
 * I/O and timers of the code under test run in between; fails naming `what` after `timeoutMs`.
 */
export async function until(check: () => boolean | Promise<boolean>, what = 'condition', timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
