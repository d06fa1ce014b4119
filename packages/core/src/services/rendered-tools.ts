import type { RenderedTool, ToolDefinition } from "@promptrun/contract";
import {
  KNOWLEDGE_BASE_TOOL_PARAMETERS,
  knowledgeBaseToolDescription,
  knowledgeBaseToolName,
} from "../tools/knowledge-base-tool.ts";

/**
 * `scheme://user:pass@host/path?query#fragment` → `scheme://host/path`: what render may show of
 * an MCP server's URL. Done on the text, because the URL may still hold `{{…}}` templates (their
 * names are shown, never a value) that a URL parser would escape or refuse.
 */
export function publicServerUrl(url: string): string {
  const withoutTail = url.replace(/[?#].*$/s, "");
  return withoutTail.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/]*@/, "$1");
}

/** A prompt's tools as render answers them (docs/PRODUCT-RULES.md "Render"); no network call. */
export function renderedTools(tools: readonly ToolDefinition[] | undefined): RenderedTool[] {
  return (tools ?? []).map((tool): RenderedTool => {
    if (tool.type === "mcp")
      return {
        type: "mcp",
        server: publicServerUrl(tool.server.url),
        allowedTools: tool.allowedTools ?? null,
      };
    if (tool.type === "knowledge_base")
      return {
        type: "knowledge_base",
        name: knowledgeBaseToolName(tool),
        description: knowledgeBaseToolDescription(tool),
        parameters: KNOWLEDGE_BASE_TOOL_PARAMETERS,
        knowledgeBase: tool.knowledgeBase,
      };
    return {
      type: tool.type,
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters,
    };
  });
}
