import type { StreamTokenService } from "@promptrun/core";
import { onSharedTick } from "./shared-ticker.ts";

/**
 * Calls `onExpired` once a stream token is no longer valid, checked every `intervalMs` on the
 * shared ticker: first the `exp` of the claims verified at connect time against the wall clock
 * (free), then — for a bounded number of subscribers per tick, round robin — a full re-verification
 * by the token service, so a changed signing key or the services' own clock still ends streams
 * (every subscriber of a small server is re-verified every tick). `onValid` runs on every tick
 * the token is still valid (the SSE ping). Returns a function that stops watching.
 */
export function watchTokenExpiry(options: {
  streamTokens: StreamTokenService;
  token: string;
  threadId: string;
  /** `exp` of the claims verified when the stream opened. */
  expiresAt: Date;
  intervalMs: number;
  onValid?: () => void;
  onExpired: () => void;
}): () => void {
  const expiresAtMs = options.expiresAt.getTime();
  let checking = false;
  let expired = false;
  const expire = () => {
    if (expired) return;
    expired = true;
    stop();
    options.onExpired();
  };
  const stop = onSharedTick(options.intervalMs, (verify) => {
    if (Date.now() >= expiresAtMs) {
      expire();
      return;
    }
    options.onValid?.();
    if (!verify || checking) return;
    checking = true;
    options.streamTokens
      .verify(options.token, options.threadId)
      .then(
        () => {},
        () => expire(),
      )
      .finally(() => {
        checking = false;
      });
  });
  return () => {
    expired = true;
    stop();
  };
}
