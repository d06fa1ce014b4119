import { describe, expect, test } from "bun:test";
import type { PromptVersion } from "@promptrun/contract";
import { createPromptCache } from "./prompts-cache.ts";

const version = (number: number): PromptVersion => ({
  id: `00000000-0000-4000-8000-00000000000${number}`,
  slug: "greet",
  version: number,
  model: "dev:echo",
  params: {},
  inputs: {},
  messages: [{ role: "user", content: "hi" }],
  output: null,
  memory: null,
  providerOptions: null,
  tools: [],
  toolChoice: null,
  maxSteps: null,
  toolTimeoutSeconds: null,
  retrieval: null,
  description: null,
  tags: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  contentHash: "0".repeat(64),
});

describe("createPromptCache", () => {
  test("fresh within cacheTtlMs, stale for staleTtlMs more, then expired; a confirm renews", () => {
    let now = 0;
    const cache = createPromptCache({ cacheTtlMs: 100, staleTtlMs: 50, now: () => now });
    expect(cache.lookup("a")).toBeNull();
    cache.confirm("a", version(1), '"etag"');
    expect(cache.lookup("a")).toMatchObject({ state: "fresh", entry: { etag: '"etag"', confirmedAt: 0 } });
    now = 99;
    expect(cache.lookup("a")?.state).toBe("fresh");
    now = 100;
    expect(cache.lookup("a")?.state).toBe("stale");
    now = 149;
    expect(cache.lookup("a")?.state).toBe("stale");
    now = 150;
    expect(cache.lookup("a")?.state).toBe("expired");
    cache.confirm("a", version(2), null);
    expect(cache.lookup("a")).toMatchObject({
      state: "fresh",
      entry: { version: { version: 2 }, etag: null },
    });
  });

  test("staleTtlMs defaults to a minute; past maxEntries the least recently confirmed goes", () => {
    let now = 0;
    const cache = createPromptCache({ cacheTtlMs: 0, maxEntries: 2, now: () => now });
    cache.confirm("a", version(1), null);
    cache.confirm("b", version(2), null);
    now = 59_999;
    expect(cache.lookup("a")?.state).toBe("stale");
    now = 60_000;
    expect(cache.lookup("a")?.state).toBe("expired");
    cache.confirm("a", version(1), null);
    cache.confirm("c", version(3), null);
    expect(cache.lookup("b")).toBeNull();
    expect(cache.lookup("a")).not.toBeNull();
    expect(cache.lookup("c")).not.toBeNull();
  });
});
