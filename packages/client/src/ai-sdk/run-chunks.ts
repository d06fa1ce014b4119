import type { RunRetrievalEvent, StreamEnvelope, ToolCall } from "@promptrun/contract";
import type { UIMessageChunk } from "ai";
import { pausedCallMetadata } from "./answered-pause.ts";

/** What one event of the run gives the UI: chunks to send, and whether the run's stream ends. */
export interface RunChunksResult {
  chunks: UIMessageChunk[];
  ended: boolean;
}

/** Why a server tool's part shows no output: the stream's `run.tool_result` does not carry it. */
const SERVER_TOOL_ERROR = "the tool failed (its error is in the run's steps)";

/**
 * Turns one run's thread events into AI SDK UI message chunks (the mapping:
 * packages/client/README.md, "With the AI SDK's useChat"). Each model call of the run
 * (`run.step`) is a UI step (`start-step` … `finish-step`), so the AI SDK's
 * `lastAssistantMessageIsCompleteWithToolCalls` looks only at the latest one. A pause ends the stream with the calls the run waits for as
 * `tool-input-available` chunks; a continuation (after their outputs) sends no `start`, so its
 * parts extend the message that holds the calls.
 */
export class RunChunks {
  readonly #runId: string;
  readonly #continuation: boolean;
  #sentStart = false;
  #stepOpen = false;
  #textId: string | null = null;
  #texts = 0;
  /** Calls of the run announced by `run.tool_call`, until their result or the pause. */
  readonly #calls = new Map<string, ToolCall>();

  constructor(runId: string, options: { continuation: boolean }) {
    this.#runId = runId;
    this.#continuation = options.continuation;
  }

  /** The chunks of one event of this run (the caller checked its `runId`). */
  next(envelope: StreamEnvelope): RunChunksResult {
    const chunks: UIMessageChunk[] = [];
    if (!this.#sentStart) {
      this.#sentStart = true;
      if (!this.#continuation) chunks.push({ type: "start" });
    }
    const ended = this.#apply(envelope, chunks);
    return { chunks, ended };
  }

  /** Adds the chunks of one event; true when the run's stream ends with it. */
  #apply(envelope: StreamEnvelope, chunks: UIMessageChunk[]): boolean {
    switch (envelope.type) {
      case "run.started":
        // A retry after tokens went out: the step's text so far is dropped (docs/TOOLS.md "Events").
        if ((envelope.data.attempt ?? 1) > 1 && this.#stepOpen) {
          this.#endText(chunks);
          chunks.push({ type: "reset-step" });
        }
        return false;
      case "run.step":
        this.#endStep(chunks);
        this.#openStep(chunks);
        return false;
      case "run.token":
        this.#openText(chunks);
        chunks.push({ type: "text-delta", id: this.#textId as string, delta: envelope.data.delta });
        return false;
      case "run.tool_call":
        this.#endText(chunks);
        this.#calls.set(envelope.data.toolCall.id, envelope.data.toolCall);
        return false;
      case "run.tool_result":
        this.#serverResult(envelope.data, chunks);
        return false;
      case "run.retrieval":
        this.#sources(envelope.data, chunks);
        return false;
      case "run.requires_action":
        this.#openStep(chunks);
        this.#endText(chunks);
        for (const call of envelope.data.requiredAction.toolCalls)
          chunks.push({
            type: "tool-input-available",
            toolCallId: call.id,
            toolName: call.name,
            input: call.arguments,
            dynamic: true,
            providerMetadata: pausedCallMetadata(this.#runId),
          });
        this.#endStep(chunks);
        chunks.push({ type: "finish", finishReason: "tool-calls" });
        return true;
      case "run.completed":
        this.#endStep(chunks);
        // Promptrun's finish reasons are the AI SDK's; an older server sends none.
        chunks.push({ type: "finish", finishReason: envelope.data.finishReason ?? "stop" });
        return true;
      case "run.failed":
        this.#endStep(chunks);
        chunks.push({ type: "error", errorText: envelope.data.error });
        return true;
      default:
        return false;
    }
  }

  /** Each retrieved chunk is a source of the answer; `[n]` in the text refers to it. */
  #sources(data: RunRetrievalEvent, chunks: UIMessageChunk[]): void {
    for (const chunk of data.chunks)
      chunks.push({
        type: "source-document",
        sourceId: chunk.chunkId,
        mediaType: "text/plain",
        title: `[${chunk.n}] ${chunk.filename}`,
        filename: chunk.filename,
        providerMetadata: {
          promptrun: {
            n: chunk.n,
            documentId: chunk.documentId,
            knowledgeBase: data.knowledgeBase,
            score: chunk.score,
          },
        },
      });
  }

  /**
   * A result of a call seen in this stream: a server tool's (or a call refused before it ran).
   * Results of calls not seen here are the client's own outputs, announced after a pause: the
   * message already has them.
   */
  #serverResult(result: { toolCallId: string; isError: boolean }, chunks: UIMessageChunk[]): void {
    const call = this.#calls.get(result.toolCallId);
    if (!call) return;
    this.#calls.delete(call.id);
    this.#openStep(chunks);
    const common = { toolCallId: call.id, dynamic: true, providerExecuted: true } as const;
    chunks.push({ type: "tool-input-available", ...common, toolName: call.name, input: call.arguments });
    chunks.push(
      result.isError
        ? { type: "tool-output-error", ...common, errorText: SERVER_TOOL_ERROR }
        : { type: "tool-output-available", ...common, output: undefined },
    );
  }

  /** A server without `run.step` events still gets one UI step around its parts. */
  #openStep(chunks: UIMessageChunk[]): void {
    if (this.#stepOpen) return;
    this.#stepOpen = true;
    chunks.push({ type: "start-step" });
  }

  #endStep(chunks: UIMessageChunk[]): void {
    this.#endText(chunks);
    if (!this.#stepOpen) return;
    this.#stepOpen = false;
    chunks.push({ type: "finish-step" });
  }

  #openText(chunks: UIMessageChunk[]): void {
    this.#openStep(chunks);
    if (this.#textId) return;
    this.#texts += 1;
    this.#textId = `text-${this.#runId}-${this.#texts}`;
    chunks.push({ type: "text-start", id: this.#textId });
  }

  #endText(chunks: UIMessageChunk[]): void {
    if (!this.#textId) return;
    chunks.push({ type: "text-end", id: this.#textId });
    this.#textId = null;
  }
}
