/**
 * PromptrunChatTransport against a real in-process Promptrun: the chunks `useChat` of
 * @ai-sdk/react consumes, the thread's memory across messages, failures and resuming.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PromptrunClient } from "@promptrun/client";
import { PromptrunChatTransport, type ResumeStorage } from "@promptrun/client/ai-sdk";
import type { UIMessage, UIMessageChunk } from "ai";
import type { TestPromptrun } from "./start-promptrun.ts";
import { startTestPromptrun } from "./test-support/start-test-promptrun.ts";

let promptrun: TestPromptrun;
let client: PromptrunClient;

beforeAll(async () => {
  ({ promptrun, client } = await startTestPromptrun());
});
afterAll(() => promptrun.stop());

/** The app's backend, played by the server-side client (it holds the API key). */
const transportFor = (storage?: ResumeStorage) =>
  new PromptrunChatTransport({
    createRun: ({ thread, message }) =>
      client.runs.create("chat", "latest", { inputs: { message }, thread, channel: "chat" }),
    getToken: (thread) => client.threads.createStreamToken(thread),
    ...(storage ? { storage } : {}),
  });

const userMessage = (text: string): UIMessage => ({
  id: crypto.randomUUID(),
  role: "user",
  parts: [{ type: "text", text }],
});

async function collect(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const textOf = (chunks: UIMessageChunk[]) =>
  chunks.flatMap((chunk) => (chunk.type === "text-delta" ? [chunk.delta] : [])).join("");

const send = (transport: PromptrunChatTransport, chatId: string, messages: UIMessage[]) =>
  transport.sendMessages({
    trigger: "submit-message",
    chatId,
    messageId: undefined,
    messages,
    abortSignal: undefined,
  });

describe("PromptrunChatTransport", () => {
  test("streams a run as UI message chunks: start, text deltas, text end, finish", async () => {
    promptrun.script.reply("Hello from Promptrun", { tokenDelayMs: 10 });
    const chunks = await collect(await send(transportFor(), crypto.randomUUID(), [userMessage("hi")]));
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      "start",
      "text-start",
      "text-delta",
      "text-delta",
      "text-delta",
      "text-end",
      "finish",
    ]);
    expect(textOf(chunks)).toBe("Hello from Promptrun");
  });

  test("a follow-up sends only the new message; the thread remembers the first exchange", async () => {
    const transport = transportFor();
    const chatId = crypto.randomUUID();
    promptrun.script.reply("Nice to meet you");
    const first = userMessage("I am Ada");
    const firstChunks = await collect(await send(transport, chatId, [first]));
    expect(textOf(firstChunks)).toBe("Nice to meet you");

    promptrun.script.echo();
    const before = promptrun.script.requests.length;
    const answer: UIMessage = {
      id: "a1",
      role: "assistant",
      parts: [{ type: "text", text: "Nice to meet you" }],
    };
    const chunks = await collect(await send(transport, chatId, [first, answer, userMessage("Who am I?")]));
    expect(textOf(chunks)).toBe("Who am I?");
    const body = promptrun.script.requests[before]?.body as {
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(body.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(String(body.messages[1]?.content)).toBe("I am Ada");
    expect(String(body.messages[2]?.content)).toBe("Nice to meet you");
  });

  test("a failed run ends the stream with an error chunk", async () => {
    promptrun.script.fail(400, { message: "the model refused" });
    try {
      const chunks = await collect(await send(transportFor(), crypto.randomUUID(), [userMessage("fail")]));
      const last = chunks.at(-1);
      expect(last?.type).toBe("error");
      expect(last?.type === "error" ? last.errorText : "").toContain("refused");
    } finally {
      promptrun.script.reset();
    }
  });

  test("a backend that refuses the run ends the stream with its error", async () => {
    const transport = new PromptrunChatTransport({
      createRun: () => Promise.reject(new Error("backend says no")),
      getToken: (thread) => client.threads.createStreamToken(thread),
    });
    const chunks = await collect(await send(transport, crypto.randomUUID(), [userMessage("x")]));
    expect(chunks).toEqual([{ type: "error", errorText: "backend says no" }]);
  });

  test("reconnectToStream: null without a streaming run; replays a run still streaming from its start", async () => {
    const saved = new Map<string, string>();
    const storage: ResumeStorage = {
      getItem: (key) => saved.get(key) ?? null,
      setItem: (key, value) => void saved.set(key, value),
      removeItem: (key) => void saved.delete(key),
    };
    const chatId = crypto.randomUUID();
    expect(await transportFor(storage).reconnectToStream({ chatId })).toBeNull();

    promptrun.script.reply("a slow answer arrives word by word", { tokenDelayMs: 60 });
    const abort = new AbortController();
    const stream = await transportFor(storage).sendMessages({
      trigger: "submit-message",
      chatId,
      messageId: undefined,
      messages: [userMessage("go slowly")],
      abortSignal: abort.signal,
    });
    // Read the first token, then drop the connection as a page reload would.
    const reader = stream.getReader();
    for (;;) {
      const { value } = await reader.read();
      if (value?.type === "text-delta") break;
    }
    abort.abort();
    reader.releaseLock();

    const resumed = await transportFor(storage).reconnectToStream({ chatId });
    expect(resumed).not.toBeNull();
    const chunks = await collect(resumed as ReadableStream<UIMessageChunk>);
    expect(textOf(chunks)).toBe("a slow answer arrives word by word");
    expect(chunks.at(-1)?.type).toBe("finish");
    expect(await transportFor(storage).reconnectToStream({ chatId })).toBeNull();
  });
});
