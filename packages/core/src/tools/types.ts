/** The surface of a run's tools (docs/TOOLS.md), shared by the engine's tool loop and this folder. */

export type ToolKind = "function" | "http" | "mcp" | "knowledge_base";

/** What the model is offered. */
export interface OfferedTool {
  name: string;
  description?: string;
  /** JSON Schema (an object schema). */
  parameters: Record<string, unknown>;
  kind: ToolKind;
}

/** `output`: a string or a JSON value. */
export interface ToolExecution {
  output: unknown;
  isError: boolean;
}

export interface RunTools {
  /** In prompt order; an mcp entry expands to its server's (allowed) tools, listed once per run. */
  offered: OfferedTool[];
  /** null: the prompt declares no such tool. */
  kindOf(name: string): ToolKind | null;
  /** null when `args` fit the tool's parameters, else a message for the model (ajv, first violation). */
  checkArguments(name: string, args: Record<string, unknown>): string | null;
  /**
   * Runs an http or mcp tool. Never throws: a failure (timeout, refused private URL, HTTP 4xx/5xx,
   * oversized or garbage response, MCP error) is `{isError: true, output: "<clear message>"}`.
   */
  execute(
    call: { id: string; name: string; arguments: Record<string, unknown> },
    signal: AbortSignal,
  ): Promise<ToolExecution>;
  /** Closes MCP sessions. */
  close(): Promise<void>;
}

export interface RunToolsContext {
  /** The run's inputs (templates may name declared inputs). */
  inputs: Record<string, unknown>;
  /** The tenant env (templates `{{env.NAME}}`). */
  env: Record<string, string>;
  allowPrivateUrls: boolean;
  /** Default per call (config.tools.timeoutMs) unless the tool sets timeoutSeconds. */
  timeoutMs: number;
  /** config.tools.maxResponseBytes: a response is read up to this much. */
  maxResponseBytes: number;
  /** Transport (tests); the private-range guard is always applied on top. */
  fetch?: typeof fetch;
  signal: AbortSignal;
  /** Searches for knowledge_base tools (the engine records each on the run); absent: such calls fail. */
  knowledge?: ToolKnowledge;
}

/** A knowledge_base tool's search as the engine runs it (docs/KNOWLEDGE.md). */
export interface ToolKnowledge {
  /**
   * Searches the tenant's knowledge base, numbers the chunks after the run's earlier retrievals,
   * records and announces the search; returns the numbered chunks as the model reads them.
   * Throws an Error whose message the model may see (unknown knowledge base, search failure).
   */
  search(knowledgeBase: string, query: string, topK: number): Promise<string>;
}
