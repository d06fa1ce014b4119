import { afterAll, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { classifyAttemptError } from "../engine/attempt-failure.ts";
import { startFakeOpenAI } from "../testing/fake-providers/index.ts";
import { type ChatStreamFlavor, createLeanChatStreamModel } from "./lean-chat-stream-model.ts";
import { emptyObservation, streamModelText } from "./stream-model-text.ts";

/** What the scripted upstream answers: a status, SSE frames, and how the body ends. */
interface Upstream {
  status?: number;
  statusText?: string;
  headers?: Record<string, string>;
  /** Raw body text for error replies. */
  text?: string;
  frames?: string[];
  end?: "close" | "cut" | "hang";
}

const encoder = new TextEncoder();
let scripted: Upstream = {};
const seenRequests: { body: unknown; headers: Record<string, string> }[] = [];

/** A wire-level OpenAI-compatible upstream on 127.0.0.1 that sends exactly the scripted bytes. */
const upstream = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  idleTimeout: 0,
  async fetch(request) {
    seenRequests.push({
      body: await request.json(),
      headers: Object.fromEntries(request.headers.entries()),
    });
    const reply = scripted;
    if (reply.text !== undefined || (reply.status ?? 200) >= 400) {
      return new Response(reply.text ?? "", {
        status: reply.status ?? 200,
        statusText: reply.statusText ?? "",
        headers: reply.headers ?? {},
      });
    }
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const frame of reply.frames ?? []) {
          controller.enqueue(encoder.encode(frame));
          // Separate network writes, so frames also arrive split across reads.
          await Bun.sleep(1);
        }
        if (reply.end === "cut") {
          // A reset drops what the client has not read yet: let it read what was sent first.
          await Bun.sleep(20);
          controller.error(undefined);
        } else if (reply.end !== "hang") controller.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  },
});

afterAll(() => upstream.stop(true));

const baseURL = `http://127.0.0.1:${upstream.port}/v1`;

const sdkModelFor = (flavor: ChatStreamFlavor, url = baseURL): LanguageModelV4 =>
  flavor === "openai"
    ? createOpenAI({ apiKey: "sk-test-key-123456", baseURL: url }).chat("gpt-4o-mini")
    : createOpenAICompatible({
        name: "local",
        baseURL: url,
        apiKey: "local-key",
        includeUsage: true,
      }).chatModel("llama3");

const leanModelFor = (flavor: ChatStreamFlavor, url = baseURL): LanguageModelV4 =>
  createLeanChatStreamModel({ sdkModel: sdkModelFor(flavor, url), flavor, includeUsage: true, fetch });

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_700_000_000, model: "m", choices, ...extra })}\n\n`;
const token = (content: unknown) => chunk([{ index: 0, delta: { content }, finish_reason: null }]);
const finishChunk = (reason: string) => chunk([{ index: 0, delta: {}, finish_reason: reason }]);
const usage = {
  prompt_tokens: 12,
  completion_tokens: 3,
  total_tokens: 15,
  prompt_tokens_details: { cached_tokens: 4 },
};
const usageChunk = chunk([], { usage });
const done = "data: [DONE]\n\n";
const start = chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);

/** What the engine reads from one attempt (stream-model-text + attempt-failure), and the request it sent. */
const engineView = async (model: LanguageModelV4, options: { abortAfterFirstToken?: boolean } = {}) => {
  const controller = new AbortController();
  const texts: string[] = [];
  const observation = emptyObservation();
  let thrown: unknown;
  try {
    await streamModelText(
      model,
      {
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "hi" },
        ],
        params: { temperature: 0.3, maxOutputTokens: 64, topP: 0.9, stopSequences: ["END"], seed: 7 },
        signal: controller.signal,
        onActivity: () => {},
        onText: (delta) => {
          texts.push(delta);
          if (options.abortAfterFirstToken) controller.abort(new Error("cancelled by test"));
        },
      },
      observation,
    );
  } catch (error) {
    thrown = error;
  }
  const error = thrown ?? observation.streamError;
  const failure =
    error === undefined
      ? null
      : classifyAttemptError(error, {
          provider: "p",
          secrets: [],
          now: new Date(0),
          idleTimeoutMs: 1000,
          attemptTimeoutMs: 1000,
        });
  const request = seenRequests.at(-1);
  return {
    texts,
    textChunks: observation.textChunks,
    finishReason: observation.finishReason,
    reportedUsage: observation.reportedUsage,
    failure,
    aborted: controller.signal.aborted && thrown !== undefined,
    requestBody: request?.body,
    authorization: request?.headers.authorization,
    contentType: request?.headers["content-type"],
  };
};

const streamParts = async (model: LanguageModelV4): Promise<LanguageModelV4StreamPart[]> => {
  const { stream } = await model.doStream({
    prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  });
  const parts: LanguageModelV4StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
};

const scenarios: Record<string, Upstream> = {
  "text, usage in its own last chunk": {
    frames: [start, token("Hel"), token("lo"), finishChunk("stop"), usageChunk, done],
  },
  "usage in the finish chunk": {
    frames: [
      token("a"),
      chunk([{ index: 0, delta: { content: "b" }, finish_reason: "stop" }], { usage }),
      done,
    ],
  },
  "no usage": { frames: [token("a"), finishChunk("stop"), done] },
  "finish reason length": { frames: [token("a"), token("b"), finishChunk("length"), usageChunk, done] },
  "empty content deltas": {
    frames: [start, token(""), token("x"), token(""), finishChunk("stop"), usageChunk, done],
  },
  "refusal delta": {
    frames: [
      chunk([{ index: 0, delta: { refusal: "no" }, finish_reason: null }]),
      finishChunk("stop"),
      usageChunk,
      done,
    ],
  },
  "events split and joined across network reads": {
    frames: [
      `${token("a")}${token("b").slice(0, 20)}`,
      `${token("b").slice(20)}${finishChunk("stop")}`,
      usageChunk,
      done,
    ],
  },
  "malformed chunk mid-stream": {
    frames: [token("a"), "data: {not json\n\n", token("b"), finishChunk("stop"), usageChunk, done],
  },
  "ends without a finish reason": { frames: [token("a"), token("b")] },
  "error frame before output": {
    frames: [
      `data: ${JSON.stringify({ error: { message: "quota gone", type: "insufficient_quota", code: "insufficient_quota" } })}\n\n`,
    ],
  },
  "error frame after output": {
    frames: [
      token("a"),
      `data: ${JSON.stringify({ error: { message: "overloaded", type: "server_error", code: null } })}\n\n`,
    ],
  },
  "429 with Retry-After": {
    status: 429,
    statusText: "Too Many Requests",
    headers: { "retry-after": "3", "content-type": "application/json" },
    text: JSON.stringify({ error: { message: "slow down", type: "rate_limit_exceeded" } }),
  },
  "500 with a JSON error": {
    status: 500,
    text: JSON.stringify({ error: { message: "boom", type: "server_error" } }),
  },
  "400 with a JSON error": {
    status: 400,
    text: JSON.stringify({
      error: { message: "bad model", type: "invalid_request_error", param: null, code: null },
    }),
  },
  "503 with a non-JSON body": { status: 503, statusText: "Service Unavailable", text: "<html>down</html>" },
  "502 with an empty body": { status: 502, statusText: "Bad Gateway", text: "" },
  "connection cut mid-stream": { frames: [token("a"), token("b")], end: "cut" },
  "connection cut before any output": { frames: [start], end: "cut" },
};

/** Outcomes with no error value in the stream parts compare part by part as well. */
const partsComparable = new Set([
  "text, usage in its own last chunk",
  "usage in the finish chunk",
  "no usage",
  "finish reason length",
  "empty content deltas",
  "refusal delta",
  "events split and joined across network reads",
]);

for (const flavor of ["openai", "compatible"] as const) {
  describe(`lean chat stream vs the AI SDK ${flavor} provider, same upstream bytes`, () => {
    for (const [name, reply] of Object.entries(scenarios)) {
      test(name, async () => {
        scripted = reply;
        const viaSdk = await engineView(sdkModelFor(flavor));
        const viaLean = await engineView(leanModelFor(flavor));
        expect(viaLean).toEqual(viaSdk);
        if (partsComparable.has(name)) {
          const sdkParts = await streamParts(sdkModelFor(flavor));
          const leanParts = await streamParts(leanModelFor(flavor));
          expect(leanParts).toEqual(sdkParts);
        }
      });
    }

    test("a chunk of the wrong shape fails the attempt as the SDK does (same class of failure)", async () => {
      scripted = {
        frames: [
          token("a"),
          `data: ${JSON.stringify({ id: "x", nothing: true })}\n\n`,
          finishChunk("stop"),
          done,
        ],
      };
      const viaSdk = await engineView(sdkModelFor(flavor));
      const viaLean = await engineView(leanModelFor(flavor));
      // The SDK's message quotes zod's issue list; the lean reader's names the missing array.
      expect({ ...viaLean, failure: { ...viaLean.failure, message: "" } }).toEqual({
        ...viaSdk,
        failure: { ...viaSdk.failure, message: "" },
      });
      expect(viaLean.failure?.retryable).toBe(true);
    });

    test("abort after the first token stops both at that token", async () => {
      scripted = { frames: [token("a"), token("b")], end: "hang" };
      const viaSdk = await engineView(sdkModelFor(flavor), { abortAfterFirstToken: true });
      const viaLean = await engineView(leanModelFor(flavor), { abortAfterFirstToken: true });
      expect(viaLean.texts).toEqual(["a"]);
      expect(viaLean.aborted).toBe(true);
      expect(viaLean.texts).toEqual(viaSdk.texts);
      expect(viaLean.aborted).toBe(viaSdk.aborted);
    });

    test("connection refused is the same retryable network failure", async () => {
      const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
      const deadUrl = `http://127.0.0.1:${closed.port}/v1`;
      closed.stop(true);
      const viaSdk = await engineView(sdkModelFor(flavor, deadUrl));
      const viaLean = await engineView(leanModelFor(flavor, deadUrl));
      expect(viaLean.failure).toEqual(viaSdk.failure);
      expect(viaLean.failure?.reason).toBe("network");
    });
  });
}

describe("lean chat stream", () => {
  test("takes over from the pinned SDK versions (their request builders are where it looks)", () => {
    for (const flavor of ["openai", "compatible"] as const) {
      const sdkModel = sdkModelFor(flavor);
      // Were the SDK internals renamed, it would hand back the SDK model and the comparisons above
      // would compare the SDK with itself.
      expect(createLeanChatStreamModel({ sdkModel, flavor, includeUsage: true, fetch })).not.toBe(sdkModel);
    }
  });

  test("works against the shared fake OpenAI server, usage included", async () => {
    const server = startFakeOpenAI({ type: "stream", tokens: ["x", "y"], usage: { input: 5, output: 2 } });
    try {
      const view = await engineView(leanModelFor("openai", server.baseUrl));
      expect(view.texts).toEqual(["x", "y"]);
      expect(view.finishReason).toBe("stop");
      expect(view.reportedUsage?.inputTokens.total).toBe(5);
      expect(view.reportedUsage?.outputTokens.total).toBe(2);
      expect(view.failure).toBeNull();
    } finally {
      await server.close();
    }
  });

  test("tools, output schemas, reasoning, provider options and file parts go to the SDK model", async () => {
    scripted = { frames: [token("a"), finishChunk("stop"), usageChunk, done] };
    const sdkModel = sdkModelFor("openai");
    let delegated = 0;
    const counting: LanguageModelV4 = {
      ...sdkModel,
      provider: sdkModel.provider,
      modelId: sdkModel.modelId,
      supportedUrls: sdkModel.supportedUrls,
      doGenerate: (options) => sdkModel.doGenerate(options),
      doStream: (options) => {
        delegated++;
        return sdkModel.doStream(options);
      },
    };
    // Private request builders are looked up on the SDK model; keep them reachable.
    Object.setPrototypeOf(counting, sdkModel);
    const lean = createLeanChatStreamModel({
      sdkModel: counting,
      flavor: "openai",
      includeUsage: true,
      fetch,
    });
    await lean.doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      tools: [{ type: "function", name: "f", inputSchema: { type: "object" } }],
    });
    expect(delegated).toBe(1);
    await streamParts(lean);
    expect(delegated).toBe(1);

    // Structured output, reasoning, provider options and file parts go there too.
    const user = (content: LanguageModelV4CallOptions["prompt"][number]["content"]) =>
      [{ role: "user", content }] as LanguageModelV4CallOptions["prompt"];
    const text = user([{ type: "text", text: "hi" }]);
    const others: LanguageModelV4CallOptions[] = [
      { prompt: text, responseFormat: { type: "json", schema: { type: "object" } } },
      { prompt: text, reasoning: "low" },
      { prompt: text, providerOptions: { openai: { promptCacheKey: "k" } } },
      {
        prompt: user([
          { type: "text", text: "see" },
          {
            type: "file",
            mediaType: "image/png",
            data: { type: "url", url: new URL("https://x.test/a.png") },
          },
        ]),
      },
    ];
    for (const [index, options] of others.entries()) {
      await (await lean.doStream(options)).stream.cancel();
      expect(delegated).toBe(2 + index);
    }
    // A plain text call with the portable default still takes the lean path.
    await streamParts(lean);
    await lean
      .doStream({ prompt: text, reasoning: "provider-default" })
      .then((result) => result.stream.cancel());
    expect(delegated).toBe(1 + others.length);
  });
});
