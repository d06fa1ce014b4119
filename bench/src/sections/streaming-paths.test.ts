import { expect, test } from "bun:test";
import { benchPrompts } from "../bench-prompts.ts";
import { type PathEndpoints, shapeOf, streamCommand } from "./streaming-paths.ts";

const endpoints: PathEndpoints = {
  upstreamBase: "http://127.0.0.1:1/v1",
  relayUrl: "http://127.0.0.1:2",
  portkey: { url: "http://127.0.0.1:3", headersFor: (base) => ({ "x-portkey-custom-host": base }) },
  promptrun: { url: "http://127.0.0.1:4", apiKey: "key" },
};

test("a bench prompt's stream shape carries its upstream model and token count", () => {
  expect(shapeOf(benchPrompts.stream50PerSecond)).toEqual({
    slug: "bench-stream-50-per-second",
    model: "stamp-250-20",
    tokens: 250,
  });
  expect(() => shapeOf(benchPrompts.gate)).toThrow("not a stamped stream");
});

test("each path reads the same upstream model; the relays in front of the upstream, Promptrun by slug", () => {
  const batch = { shape: shapeOf(benchPrompts.stream200), concurrency: 100, total: 200, startSpreadMs: 1000 };
  expect(streamCommand(endpoints, "bare Bun relay (floor)", batch)).toMatchObject({
    mode: "openai",
    url: "http://127.0.0.1:2/v1/chat/completions",
    model: "stamp-200-5",
    expectedTokens: 200,
    startSpreadMs: 1000,
  });
  expect(streamCommand(endpoints, "Portkey gateway", batch)).toMatchObject({
    url: "http://127.0.0.1:3/v1/chat/completions",
    headers: { "x-portkey-custom-host": "http://127.0.0.1:1/v1" },
  });
  expect(streamCommand(endpoints, "Promptrun (SSE)", batch)).toMatchObject({
    mode: "promptrun",
    slug: "bench-stream-200",
  });
  expect(streamCommand(endpoints, "upstream directly", { ...batch, startSpreadMs: 0 })).not.toHaveProperty(
    "startSpreadMs",
  );
});
