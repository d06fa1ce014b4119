import type { z } from "zod";
import { ApiError } from "./api-error.ts";

/** The `fetch` signature the client needs (the global one, or an injected one in tests). */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** What one REST call may carry besides its method and path. */
export interface RestRequestInit {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as multipart/form-data instead of `body` (fetch writes the boundary). */
  form?: FormData;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
}

/** The two ways the client calls the REST API: the raw answer, or a checked JSON body. */
export interface RestRequester {
  /** Sends a request with the API key; a failed `fetch` becomes a network ApiError. Any status is returned. */
  send(method: string, path: string, init?: RestRequestInit): Promise<Response>;
  /** Sends, throws an ApiError for a non-2xx answer, and parses the body with `schema`. */
  request<Schema extends z.ZodType>(
    method: string,
    path: string,
    schema: Schema,
    init?: RestRequestInit,
  ): Promise<z.infer<Schema>>;
  /** Parses a 2xx answer's JSON body with `schema` (an `invalid_response` ApiError otherwise). */
  parse<Schema extends z.ZodType>(
    response: Response,
    label: string,
    schema: Schema,
  ): Promise<z.infer<Schema>>;
}

export function createRestRequester(options: {
  baseUrl: string;
  apiKey?: string | undefined;
  fetch: FetchFunction;
}): RestRequester {
  const { baseUrl } = options;

  const send: RestRequester["send"] = async (method, path, init = {}) => {
    const headers: Record<string, string> = { accept: "application/json", ...init.headers };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    if (init.body !== undefined && init.form === undefined) headers["content-type"] = "application/json";
    const body = init.form ?? (init.body === undefined ? null : JSON.stringify(init.body));
    try {
      return await options.fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body,
        signal: init.signal ?? null,
      });
    } catch (error) {
      if (init.signal?.aborted) throw init.signal.reason;
      throw ApiError.network(error);
    }
  };

  const parse: RestRequester["parse"] = async (response, label, schema) => {
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ApiError(response.status, "invalid_response", `${label}: response is not JSON`, {
        cause: error,
      });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new ApiError(
        response.status,
        "invalid_response",
        `${label}: response does not match the contract: ${parsed.error.message}`,
        { cause: parsed.error },
      );
    }
    return parsed.data;
  };

  return {
    send,
    parse,
    async request(method, path, schema, init = {}) {
      const response = await send(method, path, init);
      if (!response.ok) throw await ApiError.fromResponse(response);
      return parse(response, `${method} ${path}`, schema);
    },
  };
}
