import { StreamAccessError, type StreamAccessLoss, type StreamTokenService } from "@promptrun/core";
import { startSharedTick, stopSharedTick, type TickTarget } from "./shared-ticker.ts";

/** Why a watched token stopped being valid: its `exp`, or what minted it is gone. */
export type TokenEndReason = "token_expired" | StreamAccessLoss;

/** Told about a watched token on each tick: still valid (time for a ping) or no longer (once). */
export interface TokenExpiryHandler {
  onTokenValid(): void;
  onTokenExpired(reason: TokenEndReason): void;
}

export interface TokenExpiryWatchOptions {
  streamTokens: StreamTokenService;
  token: string;
  threadId: string;
  /** `exp` of the claims verified when the stream opened. */
  expiresAt: Date;
  intervalMs: number;
}

/**
 * Calls `onTokenExpired` once a stream token is no longer valid, checked every `intervalMs` on the
 * shared ticker: first the `exp` of the claims verified at connect time against the wall clock
 * (free), then — for a bounded number of subscribers per tick, round robin — a full re-verification
 * by the token service, so a changed signing key or the services' own clock still ends streams
 * (every subscriber of a small server is re-verified every tick). `onTokenValid` runs on every
 * tick the token is still valid (the SSE ping). One object per watch, no timer of its own.
 */
export class TokenExpiryWatch implements TickTarget {
  private readonly expiresAtMs: number;
  private checking = false;
  private expired = false;

  constructor(
    private readonly options: TokenExpiryWatchOptions,
    private readonly handler: TokenExpiryHandler,
  ) {
    this.expiresAtMs = options.expiresAt.getTime();
    startSharedTick(options.intervalMs, this);
  }

  onTick(verify: boolean): void {
    if (Date.now() >= this.expiresAtMs) {
      this.expire();
      return;
    }
    this.handler.onTokenValid();
    if (!verify || this.checking) return;
    this.checking = true;
    this.options.streamTokens.verify(this.options.token, this.options.threadId).then(
      () => {
        this.checking = false;
      },
      (error: unknown) => {
        this.checking = false;
        this.expire(error instanceof StreamAccessError ? error.loss : "token_expired");
      },
    );
  }

  /** Stops watching (no further callbacks). */
  stop(): void {
    this.expired = true;
    stopSharedTick(this.options.intervalMs, this);
  }

  private expire(reason: TokenEndReason = "token_expired"): void {
    if (this.expired) return;
    this.stop();
    this.handler.onTokenExpired(reason);
  }
}

/** A TokenExpiryWatch with callbacks; returns a function that stops watching. */
export function watchTokenExpiry(
  options: TokenExpiryWatchOptions & { onValid?: () => void; onExpired: (reason: TokenEndReason) => void },
): () => void {
  const watch = new TokenExpiryWatch(options, {
    onTokenValid: () => options.onValid?.(),
    onTokenExpired: (reason) => options.onExpired(reason),
  });
  return () => watch.stop();
}
