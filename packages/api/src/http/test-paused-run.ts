/**
 * Test support: puts a run in the `requires_action` phase through the store's own `pause`, the
 * way the engine does when a model calls a client tool (the API tests record runs instead of
 * executing them).
 */
import type { ToolCall } from "@promptrun/contract";
import type { Store } from "@promptrun/core";

export const pausedToolCalls: ToolCall[] = [
  { id: "call_order", name: "lookup_order", arguments: { number: "A-1" } },
  { id: "call_time", name: "get_local_time", arguments: {} },
];

/** Pauses a pending run at its first step for `toolCalls`, expiring `seconds` after `now`. */
export async function pauseRun(
  store: Store,
  tenantId: string,
  runId: string,
  now: Date,
  toolCalls: ToolCall[] = pausedToolCalls,
  seconds = 600,
): Promise<{ expiresAt: Date }> {
  const zero = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };
  await store.runs.markStarted(runId, now, 1);
  const expiresAt = new Date(now.getTime() + seconds * 1000);
  const paused = await store.runs.pause(runId, {
    steps: [
      {
        index: 0,
        model: "dev:echo",
        text: "",
        toolCalls,
        toolResults: [],
        finishReason: "tool-calls",
        usage: { input: 10, inputCached: 0, output: 4, reasoning: 0, total: 14 },
        cost: { success: zero, retries: zero, total: 0 },
        startedAt: now.toISOString(),
        finishedAt: now.toISOString(),
        tokens: 0,
        attempts: 1,
      },
    ],
    pause: {
      step: 0,
      requiredAction: { type: "submit_tool_outputs", toolCalls, expiresAt: expiresAt.toISOString() },
      expiresAt,
    },
    deliveries: [],
  });
  if (!paused) throw new Error(`run ${runId} (tenant ${tenantId}) could not be paused`);
  return { expiresAt };
}
