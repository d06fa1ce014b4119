import type {
  HttpToolDefinition,
  McpToolDefinition,
  PromptDefinition,
  ToolDefinition,
} from "@promptrun/contract";
import { invalid, PromptrunError } from "../errors.ts";
import { compileJsonSchema } from "../json-schema/compile-json-schema.ts";
import { knowledgeBaseToolName } from "../tools/knowledge-base-tool.ts";
import { checkToolTemplate, checkUrlTemplate, type ToolTemplateScope } from "./tool-templates.ts";

type ToolFields = Pick<
  PromptDefinition,
  "inputs" | "tools" | "toolChoice" | "maxSteps" | "toolTimeoutSeconds"
>;

/** The names a tool offers the model, each with the path that declares it. */
function namesOf(tool: ToolDefinition, path: string): Array<{ name: string; path: string }> {
  if (tool.type === "knowledge_base")
    return [{ name: knowledgeBaseToolName(tool), path: `${path}.${tool.name ? "name" : "knowledgeBase"}` }];
  if (tool.type !== "mcp") return [{ name: tool.name, path: `${path}.name` }];
  return (tool.allowedTools ?? []).map((name, index) => ({ name, path: `${path}.allowedTools[${index}]` }));
}

/** Tool names are unique across function and http tools and mcp `allowedTools` entries. */
function checkUniqueNames(tools: ToolDefinition[]): string[] {
  const seen: string[] = [];
  for (const [index, tool] of tools.entries()) {
    for (const { name, path } of namesOf(tool, `tools[${index}]`)) {
      if (seen.includes(name)) {
        // A knowledge_base tool without `name` is called search_<slug>: say so, and how to rename it.
        const derived = path.endsWith(".knowledgeBase")
          ? ` (a knowledge_base tool is named search_<slug> unless it sets name; set a name)`
          : "";
        throw invalid(`${path}: duplicate tool name '${name}'${derived}`);
      }
      seen.push(name);
    }
  }
  return seen;
}

/** Draft 2020-12, and an object schema: providers take a tool's arguments as one JSON object. */
function checkParameters(parameters: Record<string, unknown>, path: string): void {
  try {
    compileJsonSchema(parameters);
  } catch (error) {
    if (PromptrunError.isInstance(error)) throw invalid(`${path}: ${error.message}`);
    throw error;
  }
  if (parameters.type !== "object")
    throw invalid(
      `${path}: must be an object schema (type: object): providers take tool arguments as an object`,
    );
}

/** Top-level properties of a parameters schema: what `{{args.NAME}}` may name. */
const topLevelParameters = (parameters: Record<string, unknown>): string[] => {
  const properties = parameters.properties;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return [];
  return Object.keys(properties);
};

function checkHeaders(headers: Record<string, string> | undefined, path: string, scope: ToolTemplateScope) {
  for (const [name, value] of Object.entries(headers ?? {}))
    checkToolTemplate(value, `${path}.headers.${name}`, scope);
}

function checkHttpTool(tool: HttpToolDefinition, path: string, inputs: ToolFields["inputs"]): void {
  const scope = { declarations: inputs, args: topLevelParameters(tool.parameters), tool: tool.name };
  const request = `${path}.request`;
  checkToolTemplate(tool.request.url, `${request}.url`, scope);
  checkUrlTemplate(tool.request.url, `${request}.url`);
  checkHeaders(tool.request.headers, request, scope);
  if (tool.request.body !== undefined) checkToolTemplate(tool.request.body, `${request}.body`, scope);
}

function checkMcpTool(tool: McpToolDefinition, path: string, inputs: ToolFields["inputs"]): void {
  const scope = { declarations: inputs, args: null, tool: "mcp" };
  const server = `${path}.server`;
  checkToolTemplate(tool.server.url, `${server}.url`, scope);
  checkUrlTemplate(tool.server.url, `${server}.url`);
  checkHeaders(tool.server.headers, server, scope);
}

/** `toolChoice: {name}` names a tool the model is offered (any name when an mcp server offers all its tools). */
function checkToolChoice(choice: ToolFields["toolChoice"], tools: ToolDefinition[], names: string[]): void {
  if (choice === undefined || typeof choice === "string") return;
  const unlisted = tools.some((tool) => tool.type === "mcp" && tool.allowedTools === undefined);
  if (names.includes(choice.name) || unlisted) return;
  throw invalid(
    `toolChoice.name: '${choice.name}' is not a tool of this prompt (tools: ${names.join(", ")})`,
  );
}

/**
 * Push-time rules for `tools` and its companions (docs/PRODUCT-RULES.md "Tools in prompt
 * files"). Throws `invalid` naming the field by its path (`tools[1].parameters: …`).
 */
export function checkToolDefinitions(definition: ToolFields): void {
  const tools = definition.tools ?? [];
  if (tools.length === 0) {
    for (const field of ["toolChoice", "maxSteps", "toolTimeoutSeconds"] as const)
      if (definition[field] !== undefined) throw invalid(`${field}: the prompt has no tools`);
    return;
  }
  const names = checkUniqueNames(tools);
  for (const [index, tool] of tools.entries()) {
    const path = `tools[${index}]`;
    if (tool.type === "mcp") {
      checkMcpTool(tool, path, definition.inputs);
      continue;
    }
    // Its parameters are fixed ({query}); the knowledge base need not exist yet.
    if (tool.type === "knowledge_base") continue;
    checkParameters(tool.parameters, `${path}.parameters`);
    if (tool.type === "http") checkHttpTool(tool, path, definition.inputs);
  }
  checkToolChoice(definition.toolChoice, tools, names);
}
