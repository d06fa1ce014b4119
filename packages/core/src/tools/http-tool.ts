import type { HttpToolDefinition } from "@promptrun/contract";
import { renderHttpRequest } from "./render-request.ts";
import { callSignals, failureMessage } from "./tool-failure.ts";
import { createToolFetch, readCapped } from "./tool-fetch.ts";
import type { RunToolsContext, ToolExecution } from "./types.ts";

/** How much of an error response's body the model sees after `HTTP <status>: `. */
const ERROR_BODY_CHARS = 1_000;

const isJsonType = (contentType: string | null) =>
  contentType !== null && /^application\/([\w.-]+\+)?json\b/i.test(contentType.trim());

/** JSON when the response says so and it parses (and serialises back: not nested too deep), else text. */
function bodyOutput(contentType: string | null, text: string): unknown {
  if (!isJsonType(contentType)) return text;
  try {
    const value: unknown = JSON.parse(text);
    JSON.stringify(value);
    return value;
  } catch {
    return text;
  }
}

/**
 * Runs one http tool call (docs/TOOLS.md "Server tools: http"). Never throws: a refused URL, a
 * timeout, an oversized body or a non-2xx status is an error result the model sees.
 */
export async function executeHttpTool(
  tool: HttpToolDefinition,
  args: Record<string, unknown>,
  context: RunToolsContext,
  signal: AbortSignal,
): Promise<ToolExecution> {
  const signals = callSignals(
    tool.timeoutSeconds === undefined ? context.timeoutMs : tool.timeoutSeconds * 1000,
    signal,
    context.signal,
  );
  try {
    const request = renderHttpRequest(tool, { args, inputs: context.inputs, env: context.env });
    const toolFetch = createToolFetch({
      allowPrivate: context.allowPrivateUrls,
      tenantHeaders: Object.keys(tool.request.headers ?? {}),
      transport: context.fetch,
    });
    const response = await toolFetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      signal: signals.combined,
      redirect: "manual",
    });
    const bytes = await readCapped(response, context.maxResponseBytes, signals.combined);
    const text = new TextDecoder().decode(bytes);
    if (!response.ok)
      return { isError: true, output: `HTTP ${response.status}: ${text.slice(0, ERROR_BODY_CHARS)}` };
    return { isError: false, output: bodyOutput(response.headers.get("content-type"), text) };
  } catch (error) {
    return { isError: true, output: failureMessage(error, signals, "request") };
  }
}
