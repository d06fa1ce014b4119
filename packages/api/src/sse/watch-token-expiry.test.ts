import { describe, expect, test } from "bun:test";
import type { StreamTokenClaims, StreamTokenService } from "@promptrun/core";
import { waitFor } from "@promptrun/core/testing";
import { VERIFICATIONS_PER_TICK } from "./shared-ticker.ts";
import { watchTokenExpiry } from "./watch-token-expiry.ts";

/** A token service that counts verifications and fails them once `valid` is false. */
function countingTokens() {
  const state = { verifications: 0, valid: true };
  const service: StreamTokenService = {
    issue: () => Promise.reject(new Error("not used")),
    verify: (_token, threadId): Promise<StreamTokenClaims> => {
      state.verifications++;
      return state.valid
        ? Promise.resolve({ tenantId: "t", threadId, expiresAt: new Date(Date.now() + 60_000) })
        : Promise.reject(new Error("expired"));
    },
  };
  return { service, state };
}

describe("watchTokenExpiry", () => {
  test("a token past its exp ends at the next tick without asking the token service", async () => {
    const { service, state } = countingTokens();
    let expired = 0;
    let valid = 0;
    watchTokenExpiry({
      streamTokens: service,
      token: "x",
      threadId: "thread",
      expiresAt: new Date(Date.now() - 1),
      intervalMs: 10,
      onValid: () => valid++,
      onExpired: () => expired++,
    });
    await waitFor(() => expired > 0);
    await Bun.sleep(40);
    expect({ expired, valid, verifications: state.verifications }).toEqual({
      expired: 1,
      valid: 0,
      verifications: 0,
    });
  });

  test("a few watchers are re-verified every tick; a failed verification ends the stream", async () => {
    const { service, state } = countingTokens();
    let expired = 0;
    let pings = 0;
    const stop = watchTokenExpiry({
      streamTokens: service,
      token: "x",
      threadId: "thread",
      expiresAt: new Date(Date.now() + 60_000),
      intervalMs: 10,
      onValid: () => pings++,
      onExpired: () => expired++,
    });
    await waitFor(() => state.verifications >= 2);
    expect(expired).toBe(0);
    state.valid = false;
    await waitFor(() => expired > 0);
    const pingsAtExpiry = pings;
    await Bun.sleep(40);
    expect(expired).toBe(1);
    expect(pings).toBe(pingsAtExpiry);
    stop();
  });

  test("many watchers: each tick re-verifies at most VERIFICATIONS_PER_TICK, every one pings", async () => {
    const { service, state } = countingTokens();
    const watchers = VERIFICATIONS_PER_TICK * 4;
    let pings = 0;
    const stops = Array.from({ length: watchers }, () =>
      watchTokenExpiry({
        streamTokens: service,
        token: "x",
        threadId: "thread",
        expiresAt: new Date(Date.now() + 60_000),
        intervalMs: 20,
        onValid: () => pings++,
        onExpired: () => {},
      }),
    );
    await waitFor(() => pings >= watchers);
    // Whatever number of ticks ran: every watcher pinged on each, a quarter of them verified.
    expect(pings % watchers).toBe(0);
    expect(state.verifications * 4).toBe(pings);
    for (const stop of stops) stop();
  });
});
