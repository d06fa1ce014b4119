// PLACEHOLDER until the servertools branch is merged (its index.ts replaces this file).
import type { ToolDefinition } from "@promptrun/contract";
export interface OfferedTool {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  kind: "function" | "http" | "mcp";
}
export interface ToolExecution {
  output: unknown;
  isError: boolean;
}
export interface RunTools {
  offered: OfferedTool[];
  kindOf(name: string): "function" | "http" | "mcp" | null;
  checkArguments(name: string, args: Record<string, unknown>): string | null;
  execute(
    call: { id: string; name: string; arguments: Record<string, unknown> },
    signal: AbortSignal,
  ): Promise<ToolExecution>;
  close(): Promise<void>;
}
export interface RunToolsContext {
  inputs: Record<string, unknown>;
  env: Record<string, string>;
  allowPrivateUrls: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
  fetch?: typeof fetch;
  signal: AbortSignal;
}
export declare function openRunTools(
  tools: readonly ToolDefinition[],
  context: RunToolsContext,
): Promise<RunTools>;
export declare function keptToolOutput(output: unknown): unknown;
