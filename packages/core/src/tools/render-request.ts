/**
 * Templates of server tools (docs/TOOLS.md "Server tools: http"): `{{args.NAME}}` from the
 * model's arguments, `{{env.NAME}}` and declared inputs as prompt messages render them
 * (templating/template.ts), each value encoded for where it lands, in one pass: a value is
 * never rendered again, so an argument holding `{{env.KEY}}` stays that text.
 */
import type { HttpToolDefinition } from "@promptrun/contract";
import { PromptrunError } from "../errors.ts";
import { placeholdersOf, renderTemplate } from "../templating/template.ts";
import { ToolFailure } from "./tool-failure.ts";

export interface TemplateValues {
  args: Record<string, unknown>;
  inputs: Record<string, unknown>;
  env: Record<string, string>;
}

/** How a value becomes text where it is inserted. */
type Encode = (value: unknown) => string;

const ARG = /\{\{\s*args\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
/** A placeholder at the very start of a template (the URL's base, when it names env or an input). */
const LEADING_PLACEHOLDER = /^\{\{\s*(?!args\.)(?:env\.)?[A-Za-z_][A-Za-z0-9_]*\s*\}\}/;

const text = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));
const raw: Encode = text;
const forUrl: Encode = (value) => encodeURIComponent(text(value));
/** Inside JSON text: a string's characters escaped (the template writes the quotes), anything else as JSON. */
const forJson: Encode = (value) =>
  typeof value === "string" ? JSON.stringify(value).slice(1, -1) : text(value);

const own = (record: Record<string, unknown>, name: string): unknown =>
  Object.hasOwn(record, name) ? record[name] : undefined;

/** Env and input placeholders of one stretch of template, rendered by the prompts' renderer. */
function renderStretch(stretch: string, values: TemplateValues, encode: Encode): string {
  // Only the names this stretch uses are encoded (inputs may be large data URLs).
  const inputs: Record<string, unknown> = Object.create(null);
  const env: Record<string, string> = Object.create(null);
  for (const { env: isEnv, name } of placeholdersOf(stretch)) {
    const value = own(isEnv ? values.env : values.inputs, name);
    if (value === undefined) continue;
    if (isEnv) env[name] = encode(value);
    else inputs[name] = encode(value);
  }
  return renderTemplate(stretch, inputs, env);
}

/** Renders a template; an absent argument or optional input renders empty (as in prompt messages). */
export function renderToolTemplate(template: string, values: TemplateValues, encode: Encode): string {
  let rendered = "";
  let from = 0;
  for (const match of template.matchAll(ARG)) {
    rendered += renderStretch(template.slice(from, match.index), values, encode);
    const value = own(values.args, match[1]!);
    rendered += value === undefined ? "" : encode(value);
    from = match.index + match[0].length;
  }
  return rendered + renderStretch(template.slice(from), values, encode);
}

/**
 * The URL: every value percent-encoded, except an `{{env.X}}` or input placeholder that starts
 * the URL (a base such as `{{env.API_BASE}}/v1/…`). An argument is always encoded, so the model
 * never picks the host.
 */
export function renderUrl(template: string, values: TemplateValues): string {
  const base = LEADING_PLACEHOLDER.exec(template)?.[0] ?? "";
  return (
    renderToolTemplate(base, values, raw) + renderToolTemplate(template.slice(base.length), values, forUrl)
  );
}

export interface RenderedRequest {
  url: string;
  method: string;
  headers: Headers;
  body: string | undefined;
}

const looksLikeJson = (template: string) => /^\s*[[{]/.test(template);

function renderBody(tool: HttpToolDefinition, values: TemplateValues, headers: Headers): string | undefined {
  const { method, body } = tool.request;
  if (body === undefined) {
    if (method !== "POST" && method !== "PUT" && method !== "PATCH") return undefined;
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
    return JSON.stringify(values.args);
  }
  if (method === "GET") throw new ToolFailure("request.body is not allowed with GET");
  const json = looksLikeJson(body);
  if (!headers.has("content-type"))
    headers.set("content-type", json ? "application/json" : "text/plain;charset=utf-8");
  return renderToolTemplate(body, values, json ? forJson : raw);
}

/**
 * The request of one http tool call. A missing env var, a header value that HTTP refuses (a
 * line break from an argument) or a body on GET is a ToolFailure naming the field.
 */
export function renderHttpRequest(tool: HttpToolDefinition, values: TemplateValues): RenderedRequest {
  try {
    const url = renderUrl(tool.request.url, values);
    const headers = new Headers();
    for (const [name, template] of Object.entries(tool.request.headers ?? {})) {
      try {
        headers.set(name, renderToolTemplate(template, values, raw));
      } catch (error) {
        if (PromptrunError.isInstance(error)) throw error;
        throw new ToolFailure(`request.headers.${name}: not a valid header value`);
      }
    }
    return { url, method: tool.request.method, headers, body: renderBody(tool, values, headers) };
  } catch (error) {
    // A missing env var (renderTemplate) is a PromptrunError worded for the run; the model gets it as is.
    if (PromptrunError.isInstance(error)) throw new ToolFailure(error.message);
    throw error;
  }
}

/** Headers of an MCP server entry: env and inputs only (no arguments at connect time). */
export function renderHeaders(
  headers: Record<string, string> | undefined,
  values: Omit<TemplateValues, "args">,
): Record<string, string> {
  const rendered: Record<string, string> = {};
  for (const [name, template] of Object.entries(headers ?? {})) {
    const value = renderToolTemplate(template, { ...values, args: {} }, raw);
    try {
      new Headers({ [name]: value });
    } catch {
      throw new ToolFailure(`server.headers.${name}: not a valid header value`);
    }
    rendered[name] = value;
  }
  return rendered;
}
