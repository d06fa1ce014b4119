import type { ToolCall } from "@promptrun/contract";

/**
 * Orders this page already knows, standing in for what a real page holds (the signed-in user's
 * orders). The `order-status` prompt's `lookup_order` tool is a `function` tool: Promptrun pauses
 * the run and this page answers it (see chat-app.tsx, useChat's onToolCall).
 */
const orders: Record<string, { item: string; status: string; shippedOn?: string }> = {
  "A-1001": { item: "Espresso machine", status: "shipped", shippedOn: "2026-05-02" },
  "A-1002": { item: "Coffee grinder", status: "being packed" },
};

/**
 * Answers a client tool call in the browser. The answer carries the browser's own clock and time
 * zone, which only the page knows. An unknown tool throws: useChat sends `{error: message}`.
 */
export function answerToolCall(call: ToolCall, now: Date = new Date()): unknown {
  if (call.name !== "lookup_order") throw new Error(`this page has no tool named ${call.name}`);
  const number = String(call.arguments.number ?? "").toUpperCase();
  const checkedAt = `${now.toLocaleString("en-GB")} (${Intl.DateTimeFormat().resolvedOptions().timeZone})`;
  const order = orders[number];
  return order ? { number, ...order, checkedAt } : { number, error: "no such order", checkedAt };
}
