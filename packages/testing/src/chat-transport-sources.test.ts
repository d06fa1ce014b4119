/**
 * PromptrunChatTransport and knowledge bases, against a real in-process Promptrun: a run's
 * `run.retrieval` reaches the AI SDK as `source-document` chunks (one per retrieved chunk, before
 * the answer's text), so `useChat` shows the sources the answer's `[n]` markers refer to.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { PromptrunClient } from "@promptrun/client";
import { PromptrunChatTransport } from "@promptrun/client/ai-sdk";
import type { UIMessageChunk } from "ai";
import type { TestPromptrun } from "./start-promptrun.ts";
import { startTestPromptrun } from "./test-support/start-test-promptrun.ts";

let promptrun: TestPromptrun;
let client: PromptrunClient;

beforeAll(async () => {
  ({ promptrun, client } = await startTestPromptrun({
    morePrompts: [
      {
        slug: "docs",
        inputs: { message: { type: "string" } },
        retrieval: { knowledgeBase: "manuals", query: "{{message}}", topK: 2, mode: "keyword" },
        messages: [{ role: "user", content: "Sources:\n{{retrieval}}\n\nQuestion: {{message}}" }],
      },
    ],
  }));
  await client.knowledgeBases.create({ slug: "manuals", embeddingModel: "dev:hash" });
  const documents = client.knowledgeBases.documents("manuals");
  for (const [filename, text] of [
    ["lantern.md", "The lantern battery lasts nine hours on the brightest setting."],
    ["kettle.md", "The kettle boils a litre of water in three minutes."],
  ] as const) {
    const { id } = await documents.add({ text, filename });
    await client.knowledgeBases.waitUntilReady("manuals", id, { timeoutMs: 15_000, intervalMs: 50 });
  }
});
afterAll(() => promptrun.stop());

test("the sources a run retrieved arrive as source-document chunks before its text", async () => {
  promptrun.script.reply("It lasts nine hours [1].");
  const transport = new PromptrunChatTransport({
    createRun: ({ thread, message }) =>
      client.runs.create("docs", "latest", { inputs: { message }, thread, channel: "chat" }),
    getToken: (thread) => client.threads.createStreamToken(thread),
  });
  const stream = await transport.sendMessages({
    trigger: "submit-message",
    chatId: crypto.randomUUID(),
    messageId: undefined,
    messages: [
      {
        id: crypto.randomUUID(),
        role: "user",
        parts: [{ type: "text", text: "How long does the lantern battery last?" }],
      },
    ],
    abortSignal: undefined,
  });
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);

  const sources = chunks.flatMap((chunk) => (chunk.type === "source-document" ? [chunk] : []));
  // Keyword search, any word: the kettle shares "the"; the lantern ranks first.
  expect(sources.map((source) => source.title)).toEqual(["[1] lantern.md", "[2] kettle.md"]);
  expect(sources[0]?.providerMetadata?.promptrun).toMatchObject({ n: 1, knowledgeBase: "manuals" });
  const types = chunks.map((chunk) => chunk.type);
  expect(types.indexOf("source-document")).toBeLessThan(types.indexOf("text-delta"));
  expect(types.at(-1)).toBe("finish");
});
