/**
 * One MCP server of a run (docs/TOOLS.md "Server tools: mcp"): the official SDK's client over
 * Streamable HTTP, every request through the tool fetch (URL guard, capped bodies), the
 * prompt's templated headers and nothing else.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { McpToolDefinition } from "@promptrun/contract";
import { toolNameSchema } from "@promptrun/contract";
import { renderHeaders, renderUrl } from "./render-request.ts";
import { type CallSignals, callSignals, failureMessage, seconds, ToolFailure } from "./tool-failure.ts";
import { cappedResponse, createToolFetch } from "./tool-fetch.ts";
import type { RunToolsContext, ToolExecution } from "./types.ts";

export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface McpSession {
  /** The server's tools that the prompt allows, in the server's order. */
  tools: McpTool[];
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolExecution>;
  close(): Promise<void>;
}

/** Pages of `tools/list` read at most (a server whose cursor never ends must not hold a run). */
const MAX_LIST_PAGES = 20;
/**
 * The SDK's own request timeout, a backstop behind ours (the signal), so that ours always speaks
 * first and the message says how long was waited.
 */
const sdkTimeout = (timeoutMs: number) => timeoutMs + 1_000;
/** How long close waits for the server to end the session before dropping the connection. */
const CLOSE_WAIT_MS = 1_000;

/** What the transport reported last that explains a silence (stream errors reach only `onerror`), for a timeout's message. */
interface ErrorLog {
  count: number;
  last: Error | undefined;
}

const isProtocolViolation = (error: unknown) =>
  error instanceof Error &&
  (error.name === "ZodError" || Array.isArray((error as { issues?: unknown }).issues));

/** An SDK or transport error in words for the model or the run's error. */
function describe(error: unknown): string {
  if (error instanceof ToolFailure) return error.message;
  if (error instanceof SyntaxError) return "the server's answer is not JSON";
  if (isProtocolViolation(error)) return "the server's answer is not valid MCP (JSON-RPC)";
  return error instanceof Error ? error.message : String(error);
}

/** The message of a failed open or call; a timeout names what the transport saw meanwhile. */
function mcpFailure(
  error: unknown,
  signals: CallSignals,
  log: ErrorLog,
  since: number,
  subject: string,
): string {
  const seen = log.count > since && log.last ? ` (${describe(log.last)})` : "";
  if (signals.timeout.aborted) return `${subject} timed out after ${seconds(signals.timeoutMs)}${seen}`;
  if (signals.combined.aborted) return `${subject} cancelled`;
  if (error instanceof SyntaxError || isProtocolViolation(error))
    return `${subject} failed: ${describe(error)}`;
  // The server's own error answer ("MCP error -32602: …") says it all.
  if (error instanceof McpError) return error.message;
  return failureMessage(error, signals, subject);
}

type CallResult = Awaited<ReturnType<Client["callTool"]>>;
type ContentItem = { type: string; text?: unknown; mimeType?: unknown; uri?: unknown; resource?: unknown };

/** Text items as they are; other items as a short note, so the model knows something was there. */
function itemText(item: ContentItem): string {
  if (item.type === "text") return String(item.text ?? "");
  if (item.type === "resource") {
    const resource = (item.resource ?? {}) as { text?: unknown; uri?: unknown };
    return typeof resource.text === "string" ? resource.text : `[resource ${String(resource.uri ?? "")}]`;
  }
  if (item.type === "resource_link") return `[resource_link ${String(item.uri ?? "")}]`;
  return `[${item.type} ${String(item.mimeType ?? "")}]`.replace(" ]", "]");
}

/** structuredContent when the server gives it, else the content items' text joined. */
function resultExecution(result: CallResult): ToolExecution {
  if ("toolResult" in result) return { isError: false, output: result.toolResult };
  const isError = result.isError === true;
  if (result.structuredContent !== undefined) return { isError, output: result.structuredContent };
  const content = (Array.isArray(result.content) ? result.content : []) as ContentItem[];
  return { isError, output: content.map(itemText).join("\n") };
}

/** Pages through `tools/list`. */
async function listAllTools(client: Client, signals: CallSignals): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const options = { signal: signals.combined, timeout: sdkTimeout(signals.timeoutMs) };
    const listed = await client.listTools(cursor === undefined ? undefined : { cursor }, options);
    for (const tool of listed.tools) {
      tools.push({
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.inputSchema as Record<string, unknown>,
      });
    }
    cursor = listed.nextCursor;
    if (cursor === undefined) return tools;
  }
  throw new ToolFailure(`the server's tool list goes on past ${MAX_LIST_PAGES} pages`);
}

/**
 * The tools offered: all of them, or those `allowedTools` names (each must exist). A name a
 * model provider would refuse is an error, not a silent drop.
 */
export function selectTools(listed: McpTool[], allowedTools: readonly string[] | undefined): McpTool[] {
  if (allowedTools !== undefined) {
    const names = new Set(listed.map((tool) => tool.name));
    const missing = allowedTools.filter((name) => !names.has(name));
    if (missing.length > 0) {
      const offered = listed.map((tool) => tool.name).join(", ") || "none";
      throw new ToolFailure(
        `allowedTools names ${missing.join(", ")}, which the server does not offer (it offers: ${offered})`,
      );
    }
  }
  const selected =
    allowedTools === undefined ? listed : listed.filter((tool) => allowedTools.includes(tool.name));
  const badName = selected.find((tool) => !toolNameSchema.safeParse(tool.name).success);
  if (badName)
    throw new ToolFailure(
      `the server offers a tool named '${badName.name.slice(0, 80)}', which is not a valid tool name (1 to 64 letters, digits, _ or -); list the tools you want in allowedTools`,
    );
  return selected;
}

function connectTransport(tool: McpToolDefinition, context: RunToolsContext, log: ErrorLog) {
  const values = { inputs: context.inputs, env: context.env };
  let url: URL;
  try {
    url = new URL(renderUrl(tool.server.url, { ...values, args: {} }));
  } catch (error) {
    if (error instanceof TypeError) throw new ToolFailure("server.url is not a valid URL");
    throw error;
  }
  const headers = renderHeaders(tool.server.headers, values);
  // Only what explains a silence: an oversized or unreadable answer (not the event stream's reconnects).
  const record = (error: Error) => {
    if (!(error instanceof ToolFailure || error instanceof SyntaxError || isProtocolViolation(error))) return;
    log.count++;
    log.last = error;
  };
  const toolFetch = createToolFetch({
    allowPrivate: context.allowPrivateUrls,
    tenantHeaders: Object.keys(headers),
    transport: context.fetch,
  });
  const cappedFetch = async (input: string | URL, init?: RequestInit) =>
    cappedResponse(await toolFetch(input, init), context.maxResponseBytes, record);
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: cappedFetch,
    requestInit: { headers },
    // A dropped stream is not resumed: the call's timeout reports it.
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 1_000,
      maxReconnectionDelay: 1_000,
      reconnectionDelayGrowFactor: 1,
    },
  });
  const client = new Client({ name: "promptrun", version: "1.0.0" });
  client.onerror = record;
  return { client, transport };
}

/**
 * Connects to the server and lists its tools within the timeout (the tool's timeoutSeconds or
 * the default). Rejects with a ToolFailure (or the guard's PromptrunError) saying why; the
 * session is closed then.
 */
export async function openMcpSession(tool: McpToolDefinition, context: RunToolsContext): Promise<McpSession> {
  const timeoutMs = tool.timeoutSeconds === undefined ? context.timeoutMs : tool.timeoutSeconds * 1000;
  const log: ErrorLog = { count: 0, last: undefined };
  const { client, transport } = connectTransport(tool, context, log);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_WAIT_MS);
    });
    await Promise.race([transport.terminateSession().catch(() => undefined), waited]);
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  };
  const call = async (
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolExecution> => {
    const signals = callSignals(timeoutMs, signal, context.signal);
    const since = log.count;
    try {
      const options = { signal: signals.combined, timeout: sdkTimeout(timeoutMs) };
      return resultExecution(await client.callTool({ name, arguments: args }, undefined, options));
    } catch (error) {
      return { isError: true, output: mcpFailure(error, signals, log, since, "MCP request") };
    }
  };
  const signals = callSignals(timeoutMs, context.signal);
  try {
    await client.connect(transport, { signal: signals.combined, timeout: sdkTimeout(timeoutMs) });
    const tools = selectTools(await listAllTools(client, signals), tool.allowedTools);
    return { tools, call, close };
  } catch (error) {
    // Worded before closing: closing aborts the event stream, which the transport reports too.
    const failure = new ToolFailure(mcpFailure(error, signals, log, 0, "MCP request"));
    await close();
    throw failure;
  }
}
