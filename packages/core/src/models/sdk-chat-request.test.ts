import { afterAll, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV4, LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { sdkChatRequestBuilder } from "./sdk-chat-request.ts";

/** What reached the wire: the SDK model's own request, to hold the builder's against. */
interface SeenRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}
const seen: SeenRequest[] = [];

/** An OpenAI-compatible upstream on 127.0.0.1 that records each request and answers one finished stream. */
const upstream = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    seen.push({
      url: request.url,
      headers: Object.fromEntries(request.headers.entries()),
      body: await request.json(),
    });
    const frame = {
      id: "c",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
    };
    return new Response(`data: ${JSON.stringify(frame)}\n\ndata: [DONE]\n\n`, {
      headers: { "content-type": "text/event-stream" },
    });
  },
});
afterAll(() => upstream.stop(true));
const baseURL = `http://127.0.0.1:${upstream.port}/v1`;

const models: Record<string, { model: () => LanguageModelV4; includeUsage: boolean }> = {
  "openai chat": {
    model: () =>
      createOpenAI({ apiKey: "sk-test", baseURL, headers: { "x-org": "acme" } }).chat("gpt-4o-mini"),
    // The OpenAI chat model always asks for usage while streaming.
    includeUsage: true,
  },
  "openai-compatible chat, usage on": {
    model: () =>
      createOpenAICompatible({ name: "local", baseURL, apiKey: "k", includeUsage: true }).chatModel("llama3"),
    includeUsage: true,
  },
  "openai-compatible chat, usage off": {
    model: () => createOpenAICompatible({ name: "vllm", baseURL, apiKey: "k" }).chatModel("qwen"),
    includeUsage: false,
  },
};

const calls: Record<string, LanguageModelV4CallOptions> = {
  "one user message": { prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
  "system, history and sampling settings, call headers": {
    prompt: [
      { role: "system", content: "be brief" },
      { role: "user", content: [{ type: "text", text: "a" }] },
      { role: "assistant", content: [{ type: "text", text: "b" }] },
      { role: "user", content: [{ type: "text", text: "c" }] },
    ],
    temperature: 0.3,
    topP: 0.9,
    maxOutputTokens: 64,
    stopSequences: ["END"],
    seed: 7,
    presencePenalty: 0.1,
    frequencyPenalty: 0.2,
    headers: { "x-request": "r-1" },
  },
};

/** Headers the fetch implementation adds on its own; the SDK does not set them. */
const TRANSPORT_HEADERS = new Set(["host", "connection", "content-length", "accept", "accept-encoding"]);
const lowerCased = (headers: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(headers)
      .map(([name, value]) => [name.toLowerCase(), value] as const)
      .filter(([name]) => !TRANSPORT_HEADERS.has(name)),
  );

describe("the SDK chat request, built through its private request builder", () => {
  for (const [modelName, { model, includeUsage }] of Object.entries(models)) {
    for (const [callName, callOptions] of Object.entries(calls)) {
      test(`${modelName}: ${callName} — same URL, headers and body as the SDK model sends`, async () => {
        const sdkModel = model();
        const { stream } = await sdkModel.doStream(callOptions);
        for await (const _ of stream);
        const sent = seen.at(-1)!;

        const build = sdkChatRequestBuilder(sdkModel, { includeUsage });
        // Undefined means the SDK moved its internals: the lean reader would fall back to the SDK
        // model everywhere, silently giving up its speed. Fail here instead.
        expect(build).toBeDefined();
        const built = await build!(callOptions);

        expect(built.url).toBe(sent.url);
        expect(JSON.parse(JSON.stringify(built.body))).toEqual(sent.body);
        // The SDK appends its utils version and the runtime to the user agent as it sends; the
        // builder carries the provider's part of it (the one known difference, kept on purpose).
        const { "user-agent": builtAgent, ...builtHeaders } = lowerCased(built.headers);
        const { "user-agent": sentAgent, ...sentHeaders } = lowerCased(sent.headers);
        expect(builtHeaders).toEqual(sentHeaders);
        expect(builtAgent).toBeTruthy();
        expect(sentAgent?.startsWith(`${builtAgent} `)).toBe(true);
      });
    }
  }

  test("a model without the SDK's request builder gets none (the lean reader then steps aside)", () => {
    const plain: LanguageModelV4 = {
      specificationVersion: "v4",
      provider: "other",
      modelId: "m",
      supportedUrls: {},
      doGenerate: () => Promise.reject(new Error("unused")),
      doStream: () => Promise.reject(new Error("unused")),
    };
    expect(sdkChatRequestBuilder(plain, { includeUsage: true })).toBeUndefined();
  });
});
