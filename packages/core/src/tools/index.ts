/**
 * A run's tools (docs/TOOLS.md): what the model is offered, argument checks, and the
 * server-executed ones (http requests, MCP servers). The engine's tool loop uses only this.
 */
export { keptToolOutput } from "./kept-output.ts";
export { openRunTools } from "./run-tools.ts";
export type {
  OfferedTool,
  RunTools,
  RunToolsContext,
  ToolExecution,
  ToolKind,
  ToolKnowledge,
} from "./types.ts";
