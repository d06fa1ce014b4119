import { PromptrunError } from "../errors.ts";

/** A server tool call that failed in a way the model is told about (docs/TOOLS.md). */
export class ToolFailure extends Error {
  override readonly name = "ToolFailure";
}

/** Which of a call's signals ended it: its own timeout, or the run (cancel, shutdown). */
export interface CallSignals {
  timeout: AbortSignal;
  timeoutMs: number;
  combined: AbortSignal;
}

/** One server tool call's signals: the caller's, the run's and a timeout, whichever ends first. */
export function callSignals(timeoutMs: number, ...signals: AbortSignal[]): CallSignals {
  const timeout = AbortSignal.timeout(timeoutMs);
  return { timeout, timeoutMs, combined: AbortSignal.any([...signals, timeout]) };
}

export const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * The message the model sees for a failed call, starting with `subject` ("request", "MCP call"):
 * our own failures are already worded for it; the URL guard's refusals (PromptrunError) say
 * "refused"; anything else (a connection refused, a TLS error) keeps the runtime's message.
 */
export function failureMessage(error: unknown, signals: CallSignals, subject: string): string {
  if (signals.timeout.aborted) return `${subject} timed out after ${seconds(signals.timeoutMs)}`;
  if (signals.combined.aborted) return `${subject} cancelled`;
  if (error instanceof ToolFailure) return error.message;
  if (PromptrunError.isInstance(error)) return `${subject} refused: ${error.message}`;
  return `${subject} failed: ${error instanceof Error ? error.message : String(error)}`;
}
