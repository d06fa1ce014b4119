/**
 * PromptrunChatTransport against a real in-process Promptrun: the chunks `useChat` of
 * @ai-sdk/react consumes, the thread's memory across messages, failures and resuming, and tools:
 * a paused run answered through the AI SDK's own chat state machine (`AbstractChat`, headless).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createPromptrunClient, type PromptrunClient } from "@promptrun/client";
import {
  type ChatToolOutputsRequest,
  PromptrunChatTransport,
  type ResumeStorage,
} from "@promptrun/client/ai-sdk";
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
  type UIMessageChunk,
} from "ai";
import { startPromptrun, type TestPromptrun } from "./start-promptrun.ts";
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

/** The state a UI framework would hold (as @ai-sdk/react's), without one: plain arrays. */
class PlainChatState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.with(index, message);
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's own chat state machine (what `useChat` wraps), headless. */
class HeadlessChat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    super({ ...init, state: new PlainChatState() });
  }
}

/** Waits until `check` holds (the AI SDK sends its automatic follow-up without awaiting it). */
async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await Bun.sleep(10);
  }
}

const settled = (chat: HeadlessChat) => () => chat.status !== "submitted" && chat.status !== "streaming";

/** Part types of a message, text parts with their text: a readable picture of what the UI shows. */
const partsOf = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => {
    if (part.type === "text") return `text:${part.text}`;
    if (part.type === "dynamic-tool") return `tool:${part.toolName}:${part.state}`;
    return part.type;
  });

describe("PromptrunChatTransport", () => {
  test("streams a run as UI message chunks: start, one step of text deltas, finish", async () => {
    promptrun.script.reply("Hello from Promptrun", { tokenDelayMs: 10 });
    const chunks = await collect(await send(transportFor(), crypto.randomUUID(), [userMessage("hi")]));
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      "start",
      "start-step",
      "text-start",
      "text-delta",
      "text-delta",
      "text-delta",
      "text-end",
      "finish-step",
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

  test("a retried model call drops the text it had streamed: the message keeps the retry's only", async () => {
    promptrun.script.queue(
      { type: "stream", tokens: ["Wrong ", "start ", "here"], cutAfterTokens: 2, tokenDelayMs: 50 },
      { type: "stream", tokens: ["Right ", "answer"] },
    );
    const chat = new HeadlessChat({ id: crypto.randomUUID(), transport: transportFor() });
    await chat.sendMessage({ text: "retry me" });
    await until(settled(chat), "the answer is in");
    expect(chat.status).toBe("ready");
    expect(partsOf(chat.lastMessage)).toEqual(["step-start", "text:Right answer"]);
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

describe("PromptrunChatTransport with tools", () => {
  let tools: TestPromptrun;
  let toolsClient: PromptrunClient;
  let weather: Bun.Server<undefined>;
  const weatherCities: string[] = [];

  beforeAll(async () => {
    // The http tool's remote API, on 127.0.0.1 (hence allowPrivateUrls).
    weather = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(request) {
        const city = new URL(request.url).searchParams.get("city") ?? "";
        weatherCities.push(city);
        return Response.json({ city, sky: "sunny" });
      },
    });
    tools = await startPromptrun({
      config: { allowPrivateUrls: true },
      prompts: [
        {
          slug: "assistant",
          inputs: { message: { type: "string" } },
          messages: [{ role: "user", content: "{{message}}" }],
          tools: [
            {
              type: "function",
              name: "lookup_order",
              parameters: {
                type: "object",
                properties: { number: { type: "string" } },
                required: ["number"],
              },
            },
            {
              type: "http",
              name: "get_weather",
              parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
              request: { url: `http://127.0.0.1:${weather.port}/weather?city={{args.city}}` },
            },
          ],
        },
      ],
    });
    toolsClient = createPromptrunClient({ baseUrl: tools.url, apiKey: tools.apiKey });
  });
  afterAll(async () => {
    await tools.stop();
    await weather.stop(true);
  });
  afterEach(() => tools.script.reset());

  /** The app's backend: starts runs of "assistant" and submits tool outputs with the API key, counting both. */
  function backend(options: { canSubmit?: boolean } = {}) {
    const created: string[] = [];
    const submitted: ChatToolOutputsRequest[] = [];
    const transport = new PromptrunChatTransport({
      createRun: async ({ thread, message }) => {
        const run = await toolsClient.runs.create("assistant", "latest", { inputs: { message }, thread });
        created.push(run.id);
        return run;
      },
      ...(options.canSubmit === false
        ? {}
        : {
            submitToolOutputs: (request: ChatToolOutputsRequest) => {
              submitted.push(request);
              return toolsClient.runs.submitToolOutputs(request.runId, request.toolOutputs);
            },
          }),
      getToken: (thread) => toolsClient.threads.createStreamToken(thread),
    });
    return { transport, created, submitted };
  }

  /** A chat whose page answers lookup_order itself (`onToolCall` → `addToolOutput`), as the AI SDK documents. */
  function chatAnsweringOrders(transport: PromptrunChatTransport) {
    const toolCalls: Array<{ toolName: string; input: unknown; dynamic?: boolean }> = [];
    const chat: HeadlessChat = new HeadlessChat({
      id: crypto.randomUUID(),
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: ({ toolCall }) => {
        toolCalls.push(toolCall);
        const { number } = toolCall.input as { number: string };
        // Not awaited, as the AI SDK asks inside onToolCall.
        void chat.addToolOutput({
          tool: toolCall.toolName,
          toolCallId: toolCall.toolCallId,
          output: { number, status: "shipped" },
        });
      },
    });
    return { chat, toolCalls };
  }

  /** The chat shows a finished answer: a completed text part last. */
  const answered = (chat: HeadlessChat) => () => {
    const last = chat.lastMessage?.parts.at(-1);
    return chat.status === "ready" && last?.type === "text" && last.state === "done";
  };

  const threadRuns = async (thread: string) => (await toolsClient.runs.list({ thread })).items;

  test("a run that calls a function tool ends its stream with the call (dynamic, with its run) and finish tool-calls", async () => {
    tools.script.callTools([{ name: "lookup_order", arguments: { number: "A-1001" } }], {
      text: "Let me check.",
    });
    const { transport, created } = backend();
    const chunks = await collect(
      await send(transport, crypto.randomUUID(), [userMessage("Where is A-1001?")]),
    );

    expect(chunks.filter((chunk) => chunk.type !== "text-delta").map((chunk) => chunk.type)).toEqual([
      "start",
      "start-step",
      "text-start",
      "text-end",
      "tool-input-available",
      "finish-step",
      "finish",
    ]);
    expect(textOf(chunks)).toBe("Let me check.");
    const run = await toolsClient.runs.get(created[0] as string);
    expect(run.phase).toBe("requires_action");
    const [call] = run.requiredAction?.toolCalls ?? [];
    expect(chunks.find((chunk) => chunk.type === "tool-input-available")).toEqual({
      type: "tool-input-available",
      toolCallId: call?.id as string,
      toolName: "lookup_order",
      input: { number: "A-1001" },
      dynamic: true,
      providerMetadata: { promptrun: { runId: run.id } },
    });
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" });
  });

  test("the AI SDK's chat answers the call (onToolCall + addToolOutput); the same run gets the output and completes into the same message", async () => {
    tools.script.callTools([{ name: "lookup_order", arguments: { number: "A-1001" } }], {
      text: "Let me check.",
    });
    // Then the model (echo) answers with the tool result it received.
    const { transport, created, submitted } = backend();
    const { chat, toolCalls } = chatAnsweringOrders(transport);
    await chat.sendMessage({ text: "Where is A-1001?" });
    await until(answered(chat), "the answer is in");

    expect(toolCalls).toEqual([
      expect.objectContaining({ toolName: "lookup_order", input: { number: "A-1001" }, dynamic: true }),
    ]);
    expect(created).toHaveLength(1);
    expect(await threadRuns(chat.id)).toHaveLength(1);
    const run = await toolsClient.runs.get(created[0] as string);
    const callId = run.steps[0]?.toolCalls[0]?.id as string;
    expect(submitted.map(({ runId, thread, toolOutputs }) => ({ runId, thread, toolOutputs }))).toEqual([
      {
        runId: run.id,
        thread: chat.id,
        toolOutputs: [{ toolCallId: callId, output: { number: "A-1001", status: "shipped" } }],
      },
    ]);
    expect(run.status).toBe("completed");
    expect(run.steps).toHaveLength(2);
    const content = JSON.stringify({ number: "A-1001", status: "shipped" });
    expect(tools.script.requests.at(-1)?.toolResults).toEqual([{ toolCallId: callId, content }]);
    expect(run.output).toBe(content);

    expect(chat.messages.map(partsOf)).toEqual([
      ["text:Where is A-1001?"],
      [
        "step-start",
        "text:Let me check.",
        "tool:lookup_order:output-available",
        "step-start",
        `text:${content}`,
      ],
    ]);
    // The continuation's announcement of the client's result leaves the page's output in place.
    expect(chat.lastMessage?.parts.find((part) => part.type === "dynamic-tool")).toMatchObject({
      toolCallId: callId,
      output: { number: "A-1001", status: "shipped" },
      callProviderMetadata: { promptrun: { runId: run.id } },
    });
  });

  test("answered later by a person (no onToolCall): addToolOutput with an error continues the run; the model sees {error}", async () => {
    tools.script.callTools([{ name: "lookup_order", arguments: { number: "Z-9" } }]);
    const { transport, created, submitted } = backend();
    const chat = new HeadlessChat({
      id: crypto.randomUUID(),
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    });
    await chat.sendMessage({ text: "Where is Z-9?" });
    await until(settled(chat), "the run paused");
    expect(partsOf(chat.lastMessage)).toEqual(["step-start", "tool:lookup_order:input-available"]);
    expect((await toolsClient.runs.get(created[0] as string)).phase).toBe("requires_action");
    expect(submitted).toHaveLength(0);

    const part = chat.lastMessage?.parts.find((each) => each.type === "dynamic-tool");
    await chat.addToolOutput({
      state: "output-error",
      tool: "lookup_order",
      toolCallId: part?.type === "dynamic-tool" ? part.toolCallId : "",
      errorText: "no such order",
    });
    await until(answered(chat), "the answer is in");

    const content = JSON.stringify({ error: "no such order" });
    expect(tools.script.requests.at(-1)?.toolResults.map((result) => result.content)).toEqual([content]);
    expect(partsOf(chat.lastMessage)).toEqual([
      "step-start",
      "tool:lookup_order:output-error",
      "step-start",
      `text:${content}`,
    ]);
    expect(created).toHaveLength(1);
    expect(await threadRuns(chat.id)).toHaveLength(1);
  });

  test("a run that pauses twice: each pause's outputs go to the run once, and only that pause's", async () => {
    tools.script.callTools([{ name: "lookup_order", arguments: { number: "A-1" } }]);
    tools.script.callTools([{ name: "lookup_order", arguments: { number: "B-2" } }]);
    const { transport, created, submitted } = backend();
    const { chat, toolCalls } = chatAnsweringOrders(transport);
    await chat.sendMessage({ text: "Where are A-1 and B-2?" });
    await until(answered(chat), "the answer is in");

    expect(toolCalls.map((call) => call.input)).toEqual([{ number: "A-1" }, { number: "B-2" }]);
    const run = await toolsClient.runs.get(created[0] as string);
    expect(run.status).toBe("completed");
    expect(run.steps).toHaveLength(3);
    const [first, second] = run.steps.map((step) => step.toolCalls[0]?.id as string);
    expect(first).not.toBe(second);
    expect(submitted.map((request) => request.toolOutputs)).toEqual([
      [{ toolCallId: first as string, output: { number: "A-1", status: "shipped" } }],
      [{ toolCallId: second as string, output: { number: "B-2", status: "shipped" } }],
    ]);
    expect(partsOf(chat.lastMessage)).toEqual([
      "step-start",
      "tool:lookup_order:output-available",
      "step-start",
      "tool:lookup_order:output-available",
      "step-start",
      `text:${JSON.stringify({ number: "B-2", status: "shipped" })}`,
    ]);
    expect(await threadRuns(chat.id)).toHaveLength(1);
  });

  test("a server (http) tool streams as a provider-executed call and result; the run goes on by itself", async () => {
    tools.script.callTools([{ name: "get_weather", arguments: { city: "Paris" } }]);
    const { transport, created, submitted } = backend();
    const cities = weatherCities.length;
    const chunks = await collect(
      await send(transport, crypto.randomUUID(), [userMessage("Weather in Paris?")]),
    );

    expect(chunks.filter((chunk) => chunk.type !== "text-delta").map((chunk) => chunk.type)).toEqual([
      "start",
      "start-step",
      "tool-input-available",
      "tool-output-available",
      "finish-step",
      "start-step",
      "text-start",
      "text-end",
      "finish-step",
      "finish",
    ]);
    const run = await toolsClient.runs.get(created[0] as string);
    const callId = run.steps[0]?.toolCalls[0]?.id as string;
    const common = { toolCallId: callId, dynamic: true, providerExecuted: true };
    expect(chunks.filter((chunk) => chunk.type.startsWith("tool-"))).toEqual([
      { type: "tool-input-available", ...common, toolName: "get_weather", input: { city: "Paris" } },
      { type: "tool-output-available", ...common, output: undefined },
    ]);
    expect(weatherCities.slice(cities)).toEqual(["Paris"]);
    expect(textOf(chunks)).toBe(JSON.stringify({ city: "Paris", sky: "sunny" }));
    expect(submitted).toHaveLength(0);
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
  });

  test("a step calling a server tool and a function tool: the page answers only the function call", async () => {
    tools.script.callTools([
      { name: "get_weather", arguments: { city: "Oslo" } },
      { name: "lookup_order", arguments: { number: "C-3" } },
    ]);
    const { transport, created, submitted } = backend();
    const { chat, toolCalls } = chatAnsweringOrders(transport);
    await chat.sendMessage({ text: "Weather in Oslo, and where is C-3?" });
    await until(answered(chat), "the answer is in");

    expect(toolCalls.map((call) => call.toolName)).toEqual(["lookup_order"]);
    expect(submitted.map((request) => request.toolOutputs.length)).toEqual([1]);
    const tool = chat.lastMessage?.parts.find(
      (part) => part.type === "dynamic-tool" && part.toolName === "get_weather",
    );
    expect(tool).toMatchObject({
      state: "output-available",
      providerExecuted: true,
      input: { city: "Oslo" },
    });
    const text = [
      JSON.stringify({ city: "Oslo", sky: "sunny" }),
      JSON.stringify({ number: "C-3", status: "shipped" }),
    ];
    expect(partsOf(chat.lastMessage)).toEqual([
      "step-start",
      "tool:get_weather:output-available",
      "tool:lookup_order:output-available",
      "step-start",
      `text:${text.join("\n")}`,
    ]);
    expect((await toolsClient.runs.get(created[0] as string)).status).toBe("completed");
    expect(await threadRuns(chat.id)).toHaveLength(1);
  });

  test("answering a pause twice: the server refuses the second submission, and the stream ends with its error", async () => {
    tools.script.callTools([{ name: "lookup_order", arguments: { number: "D-4" } }]);
    const { transport, submitted } = backend();
    const { chat } = chatAnsweringOrders(transport);
    await chat.sendMessage({ text: "Where is D-4?" });
    await until(answered(chat), "the answer is in");

    // The conversation as it was sent with the outputs, sent again.
    const again = await collect(await send(transport, chat.id, submitted[0]?.messages ?? []));
    expect(again.map((chunk) => chunk.type)).toEqual(["error"]);
    expect(again[0]?.type === "error" ? again[0].errorText : "").toContain("not waiting for tool outputs");
    expect(await threadRuns(chat.id)).toHaveLength(1);
  });

  test("reconnectToStream during a continuation replays the continuation only, extending the message (no start chunk)", async () => {
    tools.script.callTools([{ name: "lookup_order", arguments: { number: "F-6" } }]);
    const saved = new Map<string, string>();
    const storage: ResumeStorage = {
      getItem: (key) => saved.get(key) ?? null,
      setItem: (key, value) => void saved.set(key, value),
      removeItem: (key) => void saved.delete(key),
    };
    const transport = new PromptrunChatTransport({
      createRun: ({ thread, message }) =>
        toolsClient.runs.create("assistant", "latest", { inputs: { message }, thread }),
      submitToolOutputs: ({ runId, toolOutputs }) => toolsClient.runs.submitToolOutputs(runId, toolOutputs),
      getToken: (thread) => toolsClient.threads.createStreamToken(thread),
      storage,
    });
    const chatId = crypto.randomUUID();
    const question = userMessage("Where is F-6?");
    const paused = await collect(await send(transport, chatId, [question]));
    const call = paused.find((chunk) => chunk.type === "tool-input-available");
    if (call?.type !== "tool-input-available") throw new Error("the run did not pause");
    expect(await transport.reconnectToStream({ chatId })).toBeNull();

    // The message as the AI SDK holds it once the page answered the call.
    const answer: UIMessage = {
      id: "answer",
      role: "assistant",
      parts: [
        { type: "step-start" },
        {
          type: "dynamic-tool",
          toolName: call.toolName,
          toolCallId: call.toolCallId,
          state: "output-available",
          input: call.input,
          output: "on its way",
          ...(call.providerMetadata ? { callProviderMetadata: call.providerMetadata } : {}),
        },
      ],
    };
    tools.script.reply("it is on its way today", { tokenDelayMs: 60 });
    const abort = new AbortController();
    const stream = await transport.sendMessages({
      trigger: "submit-message",
      chatId,
      messageId: "answer",
      messages: [question, answer],
      abortSignal: abort.signal,
    });
    const reader = stream.getReader();
    for (;;) {
      const { value } = await reader.read();
      if (value?.type === "text-delta") break;
    }
    abort.abort();
    reader.releaseLock();

    const resumed = await collect(
      (await transport.reconnectToStream({ chatId })) as ReadableStream<UIMessageChunk>,
    );
    expect(resumed.some((chunk) => chunk.type === "start")).toBe(false);
    expect(resumed[0]?.type).toBe("start-step");
    expect(textOf(resumed)).toBe("it is on its way today");
    expect(resumed.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
  });

  test("a transport without submitToolOutputs cannot answer: the chat errors and the run stays paused", async () => {
    tools.script.callTools([{ name: "lookup_order", arguments: { number: "E-5" } }]);
    const { transport, created } = backend({ canSubmit: false });
    const { chat } = chatAnsweringOrders(transport);
    await chat.sendMessage({ text: "Where is E-5?" });
    await until(() => chat.status === "error", "the chat reports the error");

    expect(chat.error?.message).toContain("no submitToolOutputs");
    expect((await toolsClient.runs.get(created[0] as string)).phase).toBe("requires_action");
    expect(created).toHaveLength(1);
  });
});
