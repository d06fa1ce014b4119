/**
 * Polls `condition` every few milliseconds until it holds; throws naming `what` after a generous
 * deadline. For tests that wait on real sockets and timers without tight timing asserts.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what = "condition",
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(5);
  }
}
