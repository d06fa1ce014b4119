import type {
  HttpToolDefinition,
  KnowledgeBaseToolDefinition,
  McpToolDefinition,
  ToolDefinition,
} from "@promptrun/contract";
import { invalid, type PromptrunError } from "../errors.ts";
import { executeHttpTool } from "./http-tool.ts";
import {
  executeKnowledgeBaseTool,
  KNOWLEDGE_BASE_TOOL_PARAMETERS,
  knowledgeBaseToolDescription,
  knowledgeBaseToolName,
} from "./knowledge-base-tool.ts";
import { type McpSession, openMcpSession } from "./mcp-session.ts";
import { renderUrl } from "./render-request.ts";
import { argumentsViolation } from "./tool-arguments.ts";
import type { OfferedTool, RunTools, RunToolsContext, ToolExecution, ToolKind } from "./types.ts";

/** What a name offered to the model stands for. */
type Entry =
  | { kind: "function"; parameters: Record<string, unknown> }
  | { kind: "http"; parameters: Record<string, unknown>; tool: HttpToolDefinition }
  | { kind: "mcp"; parameters: Record<string, unknown>; session: McpSession }
  | { kind: "knowledge_base"; parameters: Record<string, unknown>; tool: KnowledgeBaseToolDefinition };

/** An MCP server URL in a message: scheme, host and port (path, query and credentials left out). */
function redactedUrl(template: string, context: RunToolsContext): string {
  try {
    const url = new URL(renderUrl(template, { args: {}, inputs: context.inputs, env: context.env }));
    const more = url.pathname !== "/" || url.search !== "" || url.hash !== "";
    return `${url.protocol}//${url.host}${more ? "/…" : "/"}`;
  } catch {
    return "(URL not shown)";
  }
}

const openError = (index: number, tool: McpToolDefinition, context: RunToolsContext, error: unknown) => {
  const reason = error instanceof Error ? error.message : String(error);
  return invalid(`tools[${index}] (mcp ${redactedUrl(tool.server.url, context)}): ${reason}`);
};

/** Opens every mcp entry at once; when one fails, the others are closed and the first failure (in prompt order) thrown. */
async function openSessions(
  tools: readonly ToolDefinition[],
  context: RunToolsContext,
): Promise<Map<number, McpSession>> {
  const mcpEntries = [...tools.entries()].filter(
    (entry): entry is [number, McpToolDefinition] => entry[1].type === "mcp",
  );
  const settled = await Promise.allSettled(mcpEntries.map(([, tool]) => openMcpSession(tool, context)));
  const sessions = new Map<number, McpSession>();
  let failure: PromptrunError | undefined;
  settled.forEach((outcome, position) => {
    const [index, tool] = mcpEntries[position]!;
    if (outcome.status === "fulfilled") sessions.set(index, outcome.value);
    else failure ??= openError(index, tool, context, outcome.reason);
  });
  if (failure) {
    await Promise.all([...sessions.values()].map((session) => session.close()));
    throw failure;
  }
  return sessions;
}

/**
 * Opens a run's tools: lists each mcp server's tools (in parallel, with the timeout). Rejects
 * with PromptrunError("invalid", "tools[2] (mcp https://host/…): <reason>") when a server cannot
 * be listed or offers a tool whose name another tool of the prompt has (docs/TOOLS.md).
 */
export async function openRunTools(
  tools: readonly ToolDefinition[],
  context: RunToolsContext,
): Promise<RunTools> {
  const sessions = await openSessions(tools, context);
  const closeAll = () =>
    Promise.all([...sessions.values()].map((session) => session.close())).then(() => undefined);
  const entries = new Map<string, Entry>();
  for (const tool of tools) {
    if (tool.type === "function") entries.set(tool.name, { kind: "function", parameters: tool.parameters });
    if (tool.type === "http") entries.set(tool.name, { kind: "http", parameters: tool.parameters, tool });
    if (tool.type === "knowledge_base")
      entries.set(knowledgeBaseToolName(tool), {
        kind: "knowledge_base",
        parameters: KNOWLEDGE_BASE_TOOL_PARAMETERS,
        tool,
      });
  }
  const offered: OfferedTool[] = [];
  for (const [index, tool] of tools.entries()) {
    if (tool.type === "knowledge_base") {
      const name = knowledgeBaseToolName(tool);
      offered.push(
        offeredTool(name, knowledgeBaseToolDescription(tool), KNOWLEDGE_BASE_TOOL_PARAMETERS, tool.type),
      );
      continue;
    }
    if (tool.type !== "mcp") {
      offered.push(offeredTool(tool.name, tool.description, tool.parameters, tool.type));
      continue;
    }
    const session = sessions.get(index)!;
    for (const mcpTool of session.tools) {
      if (entries.has(mcpTool.name)) {
        await closeAll();
        const reason = `the server offers a tool named '${mcpTool.name}', as another tool of the prompt is named; leave it out with allowedTools`;
        throw openError(index, tool, context, new Error(reason));
      }
      entries.set(mcpTool.name, { kind: "mcp", parameters: mcpTool.inputSchema, session });
      offered.push(offeredTool(mcpTool.name, mcpTool.description, mcpTool.inputSchema, "mcp"));
    }
  }
  return runTools(offered, entries, context, closeAll);
}

const offeredTool = (
  name: string,
  description: string | undefined,
  parameters: Record<string, unknown>,
  kind: ToolKind,
): OfferedTool => ({ name, ...(description === undefined ? {} : { description }), parameters, kind });

function runTools(
  offered: OfferedTool[],
  entries: Map<string, Entry>,
  context: RunToolsContext,
  closeAll: () => Promise<void>,
): RunTools {
  return {
    offered,
    kindOf: (name) => entries.get(name)?.kind ?? null,
    checkArguments(name, args) {
      const entry = entries.get(name);
      if (!entry) return `no tool named '${name}'`;
      return argumentsViolation(name, entry.parameters, args, entry.kind === "mcp");
    },
    async execute(call, signal): Promise<ToolExecution> {
      const entry = entries.get(call.name);
      if (!entry) return { isError: true, output: `no tool named '${call.name}'` };
      try {
        if (entry.kind === "http") return await executeHttpTool(entry.tool, call.arguments, context, signal);
        if (entry.kind === "mcp") return await entry.session.call(call.name, call.arguments, signal);
        if (entry.kind === "knowledge_base")
          return await executeKnowledgeBaseTool(entry.tool, call.arguments, context);
        return { isError: true, output: `${call.name} is executed by the caller, not by the server` };
      } catch (error) {
        // Both paths turn their failures into results; this is the last guard of "never throws".
        return {
          isError: true,
          output: `tool failed: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
    },
    close: closeAll,
  };
}
