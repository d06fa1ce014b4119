import { describe, expect, test } from "bun:test";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { emptyObservation, streamModelText } from "./stream-model-text.ts";

const usage = {
  inputTokens: { total: 10, noCache: 4, cacheRead: 6, cacheWrite: 0 },
  outputTokens: { total: 3, text: 2, reasoning: 1 },
};

const options = (signal: AbortSignal, texts: string[], activity: { count: number }) => ({
  messages: [
    { role: "system" as const, content: "be brief" },
    { role: "user" as const, content: "hi" },
    { role: "assistant" as const, content: "hello" },
  ],
  params: { temperature: 0.2, maxOutputTokens: 50 },
  signal,
  onActivity: () => {
    activity.count++;
  },
  onText: (delta: string) => {
    texts.push(delta);
  },
});

describe("streamModelText", () => {
  test("passes prompt and params to doStream, forwards non-empty text, records finish usage", async () => {
    const chunks: LanguageModelV4StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "0" },
      { type: "text-delta", id: "0", delta: "a" },
      { type: "text-delta", id: "0", delta: "" },
      { type: "text-delta", id: "0", delta: "b" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
    ];
    const model = new MockLanguageModelV4({
      doStream: async () => ({ stream: simulateReadableStream({ chunks }) }),
    });
    const texts: string[] = [];
    const activity = { count: 0 };
    const observation = emptyObservation();
    await streamModelText(model, options(new AbortController().signal, texts, activity), observation);
    expect(texts).toEqual(["a", "b"]);
    expect(observation.textChunks).toBe(2);
    expect(observation.finishReason).toBe("stop");
    expect(observation.reportedUsage).toEqual(usage);
    // Once for the response, once per part.
    expect(activity.count).toBe(1 + chunks.length);
    const call = model.doStreamCalls[0]!;
    expect(call.prompt).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: [{ type: "text", text: "hi" }] },
      { role: "assistant", content: [{ type: "text", text: "hello" }] },
    ]);
    expect(call.temperature).toBe(0.2);
    expect(call.maxOutputTokens).toBe(50);
  });

  test("an error part is recorded, not thrown; a stream without finish leaves finishReason null", async () => {
    const chunks: LanguageModelV4StreamPart[] = [
      { type: "text-delta", id: "0", delta: "x" },
      { type: "error", error: new Error("overloaded") },
    ];
    const model = new MockLanguageModelV4({
      doStream: async () => ({ stream: simulateReadableStream({ chunks }) }),
    });
    const observation = emptyObservation();
    await streamModelText(model, options(new AbortController().signal, [], { count: 0 }), observation);
    expect((observation.streamError as Error).message).toBe("overloaded");
    expect(observation.finishReason).toBeNull();
    expect(observation.textChunks).toBe(1);
  });

  test("an abort ends a stream that hangs mid-way, with the abort reason", async () => {
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      start(controller) {
        controller.enqueue({ type: "text-delta", id: "0", delta: "partial" });
        // …and nothing more, ever.
      },
    });
    const model = new MockLanguageModelV4({ doStream: async () => ({ stream }) });
    const controller = new AbortController();
    const texts: string[] = [];
    const done = streamModelText(model, options(controller.signal, texts, { count: 0 }), emptyObservation());
    while (texts.length === 0) await Bun.sleep(1);
    const reason = new Error("cancelled by test");
    controller.abort(reason);
    await expect(done).rejects.toBe(reason);
    expect(texts).toEqual(["partial"]);
  });
});

describe("streamModelText image and file parts", () => {
  test("a part that is neither an http(s) URL nor a base64 data URL is refused before any call", async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => ({ stream: simulateReadableStream({ chunks: [] }) }),
    });
    for (const [type, source] of [
      ["image", "ftp://example.com/a.png"],
      ["file", "not a url"],
    ] as const) {
      const part =
        type === "image"
          ? { type: "image" as const, image: source }
          : { type: "file" as const, file: source };
      const attempt = streamModelText(
        model,
        {
          messages: [{ role: "user", content: [{ type: "text", text: "look" }, part] }],
          params: {},
          signal: new AbortController().signal,
          onActivity: () => {},
          onText: () => {},
        },
        emptyObservation(),
      );
      await expect(attempt).rejects.toThrow(
        `${type === "image" ? "an image" : "a file"} part must be an https URL or a base64 data: URL`,
      );
    }
    expect(model.doStreamCalls).toHaveLength(0);
  });
});
