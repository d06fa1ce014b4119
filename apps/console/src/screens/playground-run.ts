/**
 * One playground run watched live: a fresh thread id, a stream token for it, the thread's SSE
 * stream (`subscribeToThread` of @promptrun/client: reconnects with Last-Event-ID, refreshes the
 * token), and the run created only once the stream is open, so no token is missed. Text arrives
 * token by token; at each step, tool call, pause and end the run is read again (`GET
 * /api/v1/promptruns/{id}`) for its steps, usage and cost.
 */

import { subscribeToThread } from "@promptrun/client";
import type { PromptRun, RequiredAction, StreamEnvelope } from "@promptrun/contract";
import { useCallback, useEffect, useRef, useState } from "react";
import { createRun, getRun, mintStreamToken, submitToolOutputs } from "./prompt-api.ts";

export type LiveStatus = "connecting" | "queued" | "running" | "requires_action" | "completed" | "failed";

export interface LiveRun {
  thread: string;
  runId: string | null;
  status: LiveStatus;
  /** The text streamed so far (all steps). */
  text: string;
  /** The run as last read; its steps, usage and cost. */
  run: PromptRun | null;
  /** The tool calls the run waits for, while paused. */
  requiredAction: RequiredAction | null;
  /** What stopped the run from being created or watched. */
  error: unknown;
}

/** A version 4 UUID from getRandomValues (randomUUID needs a secure context; a console on plain http has none). */
export function newThreadId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What one stream event changes; `refresh`: read the run again; `ended`: stop watching. */
function applyEvent(
  live: LiveRun,
  event: StreamEnvelope,
): { next: LiveRun; refresh: boolean; ended: boolean } {
  const running = { ...live, status: "running" as const, requiredAction: null };
  switch (event.type) {
    case "run.started":
      // A later attempt of the same run streams its text anew.
      return {
        next: { ...running, text: (event.data.attempt ?? 1) > 1 ? "" : live.text },
        refresh: false,
        ended: false,
      };
    case "run.token":
      return { next: { ...running, text: live.text + event.data.delta }, refresh: false, ended: false };
    case "run.step":
      return { next: running, refresh: true, ended: false };
    case "run.requires_action":
      return {
        next: { ...live, status: "requires_action", requiredAction: event.data.requiredAction },
        refresh: true,
        ended: false,
      };
    case "run.tool_call":
    case "run.tool_result":
      return { next: live, refresh: true, ended: false };
    case "run.completed":
      return { next: { ...live, status: "completed", text: event.data.output }, refresh: true, ended: true };
    case "run.failed":
      return { next: { ...live, status: "failed", requiredAction: null }, refresh: true, ended: true };
    default:
      return { next: live, refresh: false, ended: false };
  }
}

/** The run as read merged in: steps, usage and cost from the server; the status the stream saw unless the run ended. */
function withRun(live: LiveRun, run: PromptRun): LiveRun {
  if (run.status !== "pending") {
    return { ...live, run, status: run.status, requiredAction: null, text: run.output ?? live.text };
  }
  const paused = run.phase === "requires_action";
  // A pause already answered (the stream moved on) is not brought back by an older read.
  const status = paused && live.status !== "running" ? "requires_action" : live.status;
  return { ...live, run, status, requiredAction: status === "requires_action" ? run.requiredAction : null };
}

/** Runs a prompt version and follows it; `submit` answers a pause with tool outputs. */
export function useLiveRun() {
  const [live, setLive] = useState<LiveRun | null>(null);
  const state = useRef<LiveRun | null>(null);
  const current = useRef<AbortController | null>(null);
  useEffect(() => () => current.current?.abort(), []);

  /** Changes the run being shown; changes for a run no longer shown (a newer one started) are dropped. */
  const update = useCallback((thread: string, change: (live: LiveRun) => LiveRun) => {
    if (!state.current || state.current.thread !== thread) return;
    state.current = change(state.current);
    setLive(state.current);
  }, []);

  const start = useCallback(
    async (slug: string, version: string, inputs: Record<string, unknown>) => {
      current.current?.abort();
      const controller = new AbortController();
      current.current = controller;
      const thread = newThreadId();
      state.current = {
        thread,
        runId: null,
        status: "connecting",
        text: "",
        run: null,
        requiredAction: null,
        error: null,
      };
      setLive(state.current);
      const runId = () => (state.current?.thread === thread ? state.current.runId : null);
      try {
        const events = subscribeToThread({
          getToken: () => mintStreamToken(thread),
          signal: controller.signal,
          maxReconnectAttempts: 5,
        });
        for await (const event of events) {
          if (event.type === "ready" && runId() === null) {
            const created = await createRun(slug, version, { inputs, thread });
            update(thread, (live) => ({
              ...live,
              runId: created.id,
              status: live.status === "connecting" ? "queued" : live.status,
            }));
            continue;
          }
          let outcome = { refresh: false, ended: false };
          update(thread, (live) => {
            const { next, ...rest } = applyEvent(live, event);
            outcome = rest;
            return next;
          });
          const id = runId();
          if (outcome.refresh && id) {
            const run = await getRun(id);
            update(thread, (live) => withRun(live, run));
          }
          if (outcome.ended) break;
        }
      } catch (error) {
        update(thread, (live) => ({ ...live, error, status: live.runId ? live.status : "failed" }));
      } finally {
        controller.abort();
      }
    },
    [update],
  );

  /** Sends the outputs of the paused run's tool calls; the stream then carries on with the run. */
  const submit = useCallback(
    async (outputs: Array<{ toolCallId: string; output: unknown }>) => {
      const shown = state.current;
      if (!shown?.runId) return;
      await submitToolOutputs(shown.runId, { toolOutputs: outputs });
      update(shown.thread, (live) => ({ ...live, status: "running", requiredAction: null }));
    },
    [update],
  );

  return { live, start, submit };
}
