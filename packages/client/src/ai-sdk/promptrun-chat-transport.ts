import type { CreateRunResponse, StreamEnvelope, StreamTokenResponse } from "@promptrun/contract";
import type { ChatTransport, UIMessage, UIMessageChunk } from "ai";
import type { ToolOutput } from "../promptrun-client.ts";
import { subscribeToThread } from "../subscribe-to-thread.ts";
import { type AnsweredPause, answeredPauseOf } from "./answered-pause.ts";
import { RunChunks } from "./run-chunks.ts";

/** What {@link PromptrunChatTransport} asks the app's backend to start. */
export interface ChatRunRequest {
  /** The Promptrun thread of the chat (it keeps the conversation's memory on the server). */
  thread: string;
  /** Text of the newest user message: the only message sent; earlier ones are in the thread. */
  message: string;
  /** The whole conversation as the UI holds it, for backends that want it. */
  messages: UIMessage[];
  /** `body` given to `sendMessage(…, { body })`, passed on unchanged. */
  body: object | undefined;
  abortSignal: AbortSignal | undefined;
}

/** The outputs of a paused run's client tool calls, for the app's backend to submit. */
export interface ChatToolOutputsRequest {
  /** The paused run (`POST /api/v1/promptruns/{runId}/tool-outputs`). */
  runId: string;
  thread: string;
  /** One per call of the pause: `addToolOutput`'s output, or `{error: errorText}` for an error. */
  toolOutputs: ToolOutput[];
  messages: UIMessage[];
  body: object | undefined;
  abortSignal: AbortSignal | undefined;
}

/** Where the transport remembers a run that is still streaming, so a reload can resume it. */
export interface ResumeStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** Options of {@link PromptrunChatTransport}. */
export interface PromptrunChatTransportOptions {
  /** Starts a run through the app's own backend (which holds the API key); resolves to `{id, thread}`. */
  createRun(request: ChatRunRequest): Promise<CreateRunResponse>;
  /**
   * Submits a paused run's tool outputs through the app's backend (only an API key may:
   * `runs.submitToolOutputs(runId, toolOutputs)`). Needed for prompts with `function` tools.
   */
  submitToolOutputs?(request: ChatToolOutputsRequest): Promise<unknown>;
  /** Mints a stream token for a thread through the app's backend (a StreamTokenResponse carries the URL). */
  getToken(thread: string): Promise<string | StreamTokenResponse>;
  /** The stream URL of a thread, when `getToken` returns a bare token. */
  streamUrl?: (thread: string) => string;
  /** The Promptrun thread of a chat id (default: the chat id itself, which must then be a UUID). */
  threadOf?: (chatId: string) => string;
  /** Keeps the streaming run across page reloads (e.g. `sessionStorage`); default: memory only. */
  storage?: ResumeStorage;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

/** A run that is streaming: its id, and the stream position just before it began. */
interface ActiveRun {
  runId: string;
  thread: string;
  /** SSE id to resume after: replays the run from its first event (the server keeps ~60 s). */
  after: string | null;
  /** The run continues after tool outputs: its chunks extend the message that holds the calls. */
  continuation?: boolean;
}

type SendOptions<UI_MESSAGE extends UIMessage> = Parameters<ChatTransport<UI_MESSAGE>["sendMessages"]>[0];

const storageKey = (chatId: string) => `promptrun-chat:${chatId}`;

/** Text of a UI message's text parts. */
const textOf = (message: UIMessage): string =>
  message.parts
    .filter((part): part is Extract<UIMessage["parts"][number], { type: "text" }> => part.type === "text")
    .map((part) => part.text)
    .join("");

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * An AI SDK `ChatTransport` (what `useChat` of `@ai-sdk/react` speaks) over Promptrun threads:
 * `sendMessages` subscribes to the chat's thread, starts a run through the app's backend once the
 * stream is live, and maps the run's events to UI message chunks (run-chunks.ts). A run that
 * pauses for `function` tools ends the stream with their calls; when the conversation comes back
 * with their outputs (`addToolOutput`, then `sendAutomaticallyWhen` or `sendMessage()`), the
 * outputs are submitted to that run and its continuation streams into the same message.
 * `reconnectToStream` replays a run still streaming with `Last-Event-ID`.
 * The conversation's memory lives in the Promptrun thread: only the newest user message is sent.
 */
export class PromptrunChatTransport<UI_MESSAGE extends UIMessage = UIMessage>
  implements ChatTransport<UI_MESSAGE>
{
  /** A resumed stream starts at the run's first event: the UI rebuilds the message from it. */
  readonly resumeStreamIsReplay = true;
  readonly #options: PromptrunChatTransportOptions;
  readonly #memory = new Map<string, string>();
  readonly #storage: ResumeStorage;

  constructor(options: PromptrunChatTransportOptions) {
    this.#options = options;
    this.#storage = options.storage ?? {
      getItem: (key) => this.#memory.get(key) ?? null,
      setItem: (key, value) => void this.#memory.set(key, value),
      removeItem: (key) => void this.#memory.delete(key),
    };
  }

  async sendMessages(options: SendOptions<UI_MESSAGE>): Promise<ReadableStream<UIMessageChunk>> {
    const thread = this.#threadOf(options.chatId);
    const pause = answeredPauseOf(options.messages);
    if (pause) return this.#continue(options, thread, pause);
    const lastUser = [...options.messages].reverse().find((message) => message.role === "user");
    const message = lastUser ? textOf(lastUser) : "";
    return this.#stream(options.chatId, thread, options.abortSignal, async (after) => {
      const created = await this.#options.createRun({
        thread,
        message,
        messages: options.messages,
        body: options.body,
        abortSignal: options.abortSignal,
      });
      return { runId: created.id, thread, after };
    });
  }

  async reconnectToStream(options: {
    chatId: string;
    abortSignal?: AbortSignal;
  }): Promise<ReadableStream<UIMessageChunk> | null> {
    const stored = this.#storage.getItem(storageKey(options.chatId));
    if (!stored) return null;
    const active = JSON.parse(stored) as ActiveRun;
    return this.#stream(options.chatId, active.thread, options.abortSignal, async () => active, active.after);
  }

  #threadOf(chatId: string): string {
    return this.#options.threadOf ? this.#options.threadOf(chatId) : chatId;
  }

  /** Submits the outputs of the pause the last message answers, and streams the run on from there. */
  #continue(
    options: SendOptions<UI_MESSAGE>,
    thread: string,
    pause: AnsweredPause,
  ): Promise<ReadableStream<UIMessageChunk>> {
    return this.#stream(options.chatId, thread, options.abortSignal, async (after) => {
      const submit = this.#options.submitToolOutputs;
      if (!submit)
        throw new Error("PromptrunChatTransport has no submitToolOutputs: it cannot answer tool calls");
      if (pause.unanswered.length > 0)
        throw new Error(`tool call ${pause.unanswered.join(", ")} has no output yet`);
      await submit({
        runId: pause.runId,
        thread,
        toolOutputs: pause.toolOutputs,
        messages: options.messages,
        body: options.body,
        abortSignal: options.abortSignal,
      });
      return { runId: pause.runId, thread, after, continuation: true };
    });
  }

  /**
   * Subscribes to `thread` (after `resumeAfter` when resuming), calls `start` once the stream is
   * live, and turns that run's events into chunks until it ends or pauses.
   */
  async #stream(
    chatId: string,
    thread: string,
    abortSignal: AbortSignal | undefined,
    start: (after: string | null) => Promise<ActiveRun>,
    resumeAfter: string | null = null,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const controller = new AbortController();
    const abort = () => controller.abort(abortSignal?.reason);
    abortSignal?.addEventListener("abort", abort, { once: true });
    const events = subscribeToThread({
      getToken: () => this.#options.getToken(thread),
      ...(this.#options.streamUrl ? { url: this.#options.streamUrl(thread) } : {}),
      lastEventId: resumeAfter,
      signal: controller.signal,
      ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
    });
    const storage = this.#storage;
    const key = storageKey(chatId);

    return new ReadableStream<UIMessageChunk>({
      async start(sink) {
        let active: ActiveRun | null = null;
        let chunksOf: RunChunks | null = null;
        // Events that arrive before the run's id is known (the 202 may come after its first tokens).
        const early: StreamEnvelope[] = [];
        let lastId: string | null = resumeAfter;
        let started = false;
        const finish = (chunks: UIMessageChunk[]) => {
          for (const chunk of chunks) sink.enqueue(chunk);
          storage.removeItem(key);
          sink.close();
          controller.abort();
        };
        /** Handles one event of the run; true when the run's stream has ended. */
        const handle = (envelope: StreamEnvelope): boolean => {
          if (!active || !chunksOf || !("runId" in envelope.data) || envelope.data.runId !== active.runId)
            return false;
          if (!started) {
            started = true;
            // Event ids are increasing decimal integers: resuming after (first id − 1) replays the whole run.
            if (/^\d+$/.test(envelope.id)) {
              active.after = (BigInt(envelope.id) - 1n).toString();
              storage.setItem(key, JSON.stringify(active));
            }
          }
          const { chunks, ended } = chunksOf.next(envelope);
          if (ended) finish(chunks);
          else for (const chunk of chunks) sink.enqueue(chunk);
          return ended;
        };
        const beginRun = async () => {
          active = await start(lastId);
          chunksOf = new RunChunks(active.runId, { continuation: active.continuation === true });
          storage.setItem(key, JSON.stringify(active));
          for (const envelope of early.splice(0)) if (handle(envelope)) return true;
          return false;
        };
        try {
          if (resumeAfter !== null && (await beginRun())) return;
          for await (const envelope of events) {
            if (envelope.type === "ready") {
              if (envelope.id) lastId = envelope.id;
              if (!active && (await beginRun())) return;
              continue;
            }
            if (envelope.type === "reset") {
              finish([
                { type: "error", errorText: "the stream moved past this answer; reload the conversation" },
              ]);
              return;
            }
            lastId = envelope.id;
            if (!active) early.push(envelope);
            else if (handle(envelope)) return;
          }
          if (abortSignal?.aborted) {
            sink.enqueue({ type: "abort" });
            sink.close();
          }
        } catch (error) {
          if (controller.signal.aborted) {
            sink.close();
            return;
          }
          sink.enqueue({ type: "error", errorText: errorText(error) });
          storage.removeItem(key);
          sink.close();
        } finally {
          abortSignal?.removeEventListener("abort", abort);
        }
      },
      cancel() {
        controller.abort();
      },
    });
  }
}
