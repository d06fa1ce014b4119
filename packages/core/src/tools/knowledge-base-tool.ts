/**
 * The knowledge_base tool (docs/KNOWLEDGE.md "In prompts"): the model searches a knowledge base of
 * the tenant when it decides to; the server executes the search (as http tools) and answers with
 * the numbered chunks, `[n] <filename>: <text>`, numbered after the run's earlier retrievals.
 */
import { DEFAULT_SEARCH_TOP_K, type KnowledgeBaseToolDefinition } from "@promptrun/contract";
import type { RunToolsContext, ToolExecution } from "./types.ts";

/** What the model fills in: one search query. */
export const KNOWLEDGE_BASE_TOOL_PARAMETERS: Record<string, unknown> = {
  type: "object",
  properties: {
    query: { type: "string", description: "What to search for, in a few words or a question." },
  },
  required: ["query"],
};

const TOOL_NAME_MAX = 64;

/** The model-facing name: `name`, else `search_<slug>` with characters outside [a-zA-Z0-9_-] as `_`, cut to 64. */
export const knowledgeBaseToolName = (tool: Pick<KnowledgeBaseToolDefinition, "name" | "knowledgeBase">) =>
  tool.name ?? `search_${tool.knowledgeBase}`.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, TOOL_NAME_MAX);

/** The description the model reads: the prompt's, else one naming the knowledge base and the [n] markers. */
export const knowledgeBaseToolDescription = (tool: KnowledgeBaseToolDefinition): string =>
  tool.description ??
  `Searches the knowledge base '${tool.knowledgeBase}' and returns the matching passages, each as [n] <filename>: <text>. Cite a passage you use as [n].`;

/** Runs one knowledge_base call. Never throws: an empty query or a failed search is an error result the model sees. */
export async function executeKnowledgeBaseTool(
  tool: KnowledgeBaseToolDefinition,
  args: Record<string, unknown>,
  context: Pick<RunToolsContext, "knowledge">,
): Promise<ToolExecution> {
  const query = typeof args.query === "string" ? args.query.trim() : "";
  if (query === "") return { isError: true, output: "query must be a non-empty string" };
  if (!context.knowledge)
    return { isError: true, output: "knowledge bases are not available on this server" };
  try {
    const output = await context.knowledge.search(
      tool.knowledgeBase,
      query,
      tool.topK ?? DEFAULT_SEARCH_TOP_K,
    );
    return { isError: false, output };
  } catch (error) {
    return { isError: true, output: error instanceof Error ? error.message : String(error) };
  }
}
