import { afterAll, expect, test } from "bun:test";
import { createParser } from "eventsource-parser";
import { wallClockMs } from "./clock.ts";
import { parseUpstreamModel, stampOf } from "./stamped-tokens.ts";
import { startStampedUpstream } from "./stamped-upstream.ts";

const upstream = startStampedUpstream();
afterAll(() => upstream.stop());

async function readCompletion(
  model: string,
): Promise<{ deltas: string[]; receivedAt: number[]; usage: unknown }> {
  const response = await fetch(`${upstream.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  const deltas: string[] = [];
  const receivedAt: number[] = [];
  let usage: unknown = null;
  let done = false;
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") {
        done = true;
        return;
      }
      const chunk = JSON.parse(event.data) as {
        choices: Array<{ delta: { content?: string } }>;
        usage?: unknown;
      };
      if (chunk.usage) usage = chunk.usage;
      const content = chunk.choices[0]?.delta.content;
      if (content) {
        deltas.push(content);
        receivedAt.push(wallClockMs());
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }));
  expect(done).toBe(true);
  return { deltas, receivedAt, usage };
}

test("model names pick the behaviour", () => {
  expect(parseUpstreamModel("stamp-200-5")).toEqual({ kind: "stamp", tokens: 200, intervalMs: 5 });
  expect(parseUpstreamModel("gate")).toEqual({ kind: "gate" });
  expect(parseUpstreamModel("gpt-4o")).toBeNull();
  expect(stampOf("hello")).toBeNull();
});

test("stamped tokens arrive in order, paced, each stamped before it was received", async () => {
  const startedAt = wallClockMs();
  const { deltas, receivedAt, usage } = await readCompletion("stamp-20-5");
  expect(deltas).toHaveLength(20);
  const stamps = deltas.map((delta) => stampOf(delta)!);
  for (const [index, stamp] of stamps.entries()) {
    expect(stamp).toBeGreaterThanOrEqual(startedAt);
    expect(stamp).toBeLessThanOrEqual(receivedAt[index]!);
    if (index > 0) expect(stamp).toBeGreaterThanOrEqual(stamps[index - 1]!);
  }
  // Pacing is relative to the first token: the 20th is sent about 19 intervals later. Timers may
  // fire a little early (93.3 ms was seen for 95), so allow 4 ms of each 5; unpaced would be ~0.
  expect(stamps[19]! - stamps[0]!).toBeGreaterThanOrEqual(19 * 4);
  expect(usage).toEqual({ prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 });
});

test("the gate holds requests until it opens", async () => {
  let finished = false;
  const before = upstream.requestCount();
  const held = readCompletion("gate").then((result) => {
    finished = true;
    return result;
  });
  for (let polls = 0; upstream.requestCount() === before && polls < 500; polls++) await Bun.sleep(10);
  expect(upstream.requestCount()).toBe(before + 1);
  // Another request completes while the gated one is still held.
  await readCompletion("stamp-1-0");
  expect(finished).toBe(false);
  const response = await fetch(`${upstream.url}/control/open-gate`, { method: "POST" });
  expect(response.status).toBe(200);
  expect((await held).deltas).toHaveLength(1);
  expect((await readCompletion("gate")).deltas).toHaveLength(1);
  // Closed again: the next gated request waits for the next opening.
  await fetch(`${upstream.url}/control/close-gate`, { method: "POST" });
  let heldAgain = true;
  const second = readCompletion("gate").then(() => {
    heldAgain = false;
  });
  await readCompletion("stamp-2-1");
  expect(heldAgain).toBe(true);
  upstream.openGate();
  await second;
  expect(heldAgain).toBe(false);
});

test("unknown models are refused", async () => {
  const response = await fetch(`${upstream.url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ model: "gpt-4o", stream: true }),
  });
  expect(response.status).toBe(400);
});
