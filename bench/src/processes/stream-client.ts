/**
 * Streaming-overhead client (its own process): reads stamped completions directly from the
 * upstream, through the Portkey gateway, or through Promptrun with a browser-like EventSource
 * subscriber. Command on stdin: {type:"run", …StreamClientCommand}; answers {type:"result", …}.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { streamText } from "ai";
import { EventSource } from "eventsource";
import { createParser } from "eventsource-parser";
import { commands, emit } from "../child-protocol.ts";
import type { LatencyHistogram } from "../latency-histogram.ts";
import { runStreamBatch, StreamStopwatch, type StreamTiming } from "../stream-measurement.ts";

/** Ends the process with a code. */
const exitProcess: (code?: number) => never = process.exit.bind(process);

export type StreamClientCommand = {
  type: "run";
  concurrency: number;
  total: number;
  expectedTokens: number;
  timeoutMs: number;
  /** Workers start at random moments within this many ms (see runStreamBatch). */
  startSpreadMs?: number;
} & (
  | { mode: "openai"; url: string; headers: Record<string, string>; model: string }
  /** The AI SDK's streamText on an OpenAI-compatible provider: what Promptrun's engine runs per call. */
  | { mode: "ai-sdk"; baseUrl: string; model: string }
  | { mode: "promptrun"; baseUrl: string; apiKey: string; slug: string }
);

const REQUEST_BODY_MESSAGES = [{ role: "user", content: "Say two hundred things." }];

/** An OpenAI-style streaming completion read like the OpenAI SDK does: fetch + SSE parsing. */
async function openAIStream(
  command: Extract<StreamClientCommand, { mode: "openai" }>,
  perToken: LatencyHistogram,
) {
  const stopwatch = new StreamStopwatch(perToken);
  stopwatch.start();
  const response = await fetch(command.url, {
    method: "POST",
    headers: { "content-type": "application/json", ...command.headers },
    body: JSON.stringify({ model: command.model, stream: true, messages: REQUEST_BODY_MESSAGES }),
    signal: AbortSignal.timeout(command.timeoutMs),
  });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") return;
      const chunk = JSON.parse(event.data) as { choices?: Array<{ delta?: { content?: string } }> };
      const content = chunk.choices?.[0]?.delta?.content;
      if (content) stopwatch.token(content);
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of response.body) parser.feed(decoder.decode(bytes, { stream: true }));
  if (stopwatch.tokens !== command.expectedTokens) throw new Error(`got ${stopwatch.tokens} tokens`);
  return stopwatch.result();
}

async function aiSdkStream(
  command: Extract<StreamClientCommand, { mode: "ai-sdk" }>,
  perToken: LatencyHistogram,
) {
  const provider = createOpenAICompatible({ name: "bench", baseURL: command.baseUrl, includeUsage: true });
  const stopwatch = new StreamStopwatch(perToken);
  stopwatch.start();
  const result = streamText({
    model: provider.chatModel(command.model),
    messages: [{ role: "user", content: "Say two hundred things." }],
    abortSignal: AbortSignal.timeout(command.timeoutMs),
  });
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") stopwatch.token(part.text);
    if (part.type === "error") throw part.error instanceof Error ? part.error : new Error(String(part.error));
  }
  if (stopwatch.tokens !== command.expectedTokens) throw new Error(`got ${stopwatch.tokens} tokens`);
  return stopwatch.result();
}

/**
 * Through Promptrun as a browser would: mint a stream token (the app's backend), subscribe with
 * EventSource and wait for `ready`, then start the run and time the tokens that arrive.
 */
async function promptrunStream(
  command: Extract<StreamClientCommand, { mode: "promptrun" }>,
  perToken: LatencyHistogram,
): Promise<StreamTiming> {
  const auth = { authorization: `Bearer ${command.apiKey}`, "content-type": "application/json" };
  const thread = crypto.randomUUID();
  const tokenResponse = await fetch(`${command.baseUrl}/api/v1/threads/${thread}/stream-token`, {
    method: "POST",
    headers: auth,
  });
  if (!tokenResponse.ok) throw new Error(`stream-token HTTP ${tokenResponse.status}`);
  const { token, url } = (await tokenResponse.json()) as { token: string; url: string };
  const stopwatch = new StreamStopwatch(perToken);
  const source = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` },
      }),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no ready event")), command.timeoutMs);
      source.addEventListener("ready", () => {
        clearTimeout(timer);
        resolve();
      });
      source.onerror = (event) => {
        clearTimeout(timer);
        reject(new Error(`EventSource error: ${event.message ?? "unknown"}`));
      };
    });
    const finished = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out after ${stopwatch.tokens} tokens`)),
        command.timeoutMs,
      );
      source.addEventListener("run.started", () => stopwatch.runStarted());
      source.addEventListener("run.token", (event) => {
        stopwatch.token((JSON.parse(event.data) as { delta: string }).delta);
      });
      source.addEventListener("run.completed", () => {
        clearTimeout(timer);
        resolve();
      });
      source.addEventListener("run.failed", (event) => {
        clearTimeout(timer);
        reject(new Error(`run failed: ${event.data}`));
      });
    });
    stopwatch.start();
    const created = await fetch(`${command.baseUrl}/api/v1/prompts/${command.slug}/latest/runs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ inputs: { message: "Say two hundred things." }, thread }),
    });
    stopwatch.accepted();
    if (created.status !== 202) throw new Error(`create run HTTP ${created.status}: ${await created.text()}`);
    await finished;
    if (stopwatch.tokens !== command.expectedTokens) throw new Error(`got ${stopwatch.tokens} tokens`);
    return stopwatch.result();
  } finally {
    source.close();
  }
}

emit({ type: "ready" });
for await (const command of commands<StreamClientCommand | { type: "exit" }>()) {
  if (command.type === "exit") exitProcess(0);
  const result = await runStreamBatch(
    command.concurrency,
    command.total,
    (perToken) =>
      command.mode === "openai"
        ? openAIStream(command, perToken)
        : command.mode === "ai-sdk"
          ? aiSdkStream(command, perToken)
          : promptrunStream(command, perToken),
    command.startSpreadMs,
  );
  emit({ type: "result", ...result });
}
