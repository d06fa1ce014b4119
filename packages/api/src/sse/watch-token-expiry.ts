import type { StreamTokenService } from "@promptrun/core";

/**
 * Re-verifies a stream token every `intervalMs` and calls `onExpired` once it fails (expiry, or
 * a key change). Re-verifying rather than comparing `exp` with the wall clock keeps the services'
 * clock the only one. Returns a function that stops watching.
 */
export function watchTokenExpiry(options: {
  streamTokens: StreamTokenService;
  token: string;
  threadId: string;
  intervalMs: number;
  onValid?: () => void;
  onExpired: () => void;
}): () => void {
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    options.streamTokens
      .verify(options.token, options.threadId)
      .then(
        () => options.onValid?.(),
        () => options.onExpired(),
      )
      .finally(() => {
        checking = false;
      });
  }, options.intervalMs);
  return () => clearInterval(timer);
}
