import { PromptrunError } from "@promptrun/core";
import { TRPCError } from "@trpc/server";
import type { ApiConfig } from "../deps.ts";
import { trpcCodeByErrorCode } from "../errors.ts";
import { isJsonContentType } from "../http/content-type.ts";
import { parseJsonBody } from "../http/parse-json-body.ts";
import { readBodyBytes } from "../http/read-body-bytes.ts";
import { formatTrpcError } from "./error-formatter.ts";

/** Calls in one tRPC batch (`?batch=1`, paths joined by commas); more is a 400 before anything is read. */
export const MAX_TRPC_BATCH_SIZE = 10;

/** Query parameters tRPC parses as JSON (`input` for GET calls and subscriptions). */
const JSON_QUERY_PARAMETERS = ["input", "connectionParams"] as const;

type Limits = Pick<ApiConfig, "maxBodyBytes" | "maxJsonDepth">;

const pathsOf = (url: URL): string[] => {
  const path = url.pathname.replace(/^\/trpc\/?/, "");
  return url.searchParams.get("batch") === "1" ? path.split(",") : [path];
};

/** Size, depth and string rules of REST's bodies, applied to a JSON query parameter. */
function checkQueryJson(url: URL, { maxBodyBytes, maxJsonDepth }: Limits): void {
  for (const name of JSON_QUERY_PARAMETERS) {
    const text = url.searchParams.get(name);
    if (text === null) continue;
    const bytes = new TextEncoder().encode(text);
    if (bytes.byteLength > maxBodyBytes) {
      throw new PromptrunError("payload_too_large", `?${name}= exceeds ${maxBodyBytes} bytes`);
    }
    parseJsonBody(bytes, maxJsonDepth);
  }
}

/** The error as tRPC itself would answer it: `{error: shape}`, one per call for a batch. */
function trpcErrorResponse(error: PromptrunError, paths: string[], isBatch: boolean): Response {
  const trpcError = new TRPCError({
    code: trpcCodeByErrorCode[error.code],
    message: error.message,
    cause: error,
  });
  const shapes = paths.map((path) => formatTrpcError({ error: trpcError, path, defaultHttpStatus: 400 }));
  const body = isBatch ? shapes.map((shape) => ({ error: shape })) : { error: shapes[0] };
  return new Response(JSON.stringify(body), {
    status: shapes[0]?.data.httpStatus ?? 400,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

/**
 * The limits REST applies, for tRPC (docs/SECURITY.md "Limits"). Refused before tRPC reads
 * anything: a batch of more than MAX_TRPC_BATCH_SIZE calls, a POST that is not JSON (tRPC would
 * buffer form-data or octet-stream bodies whole), a query-string input over the size or depth
 * limit. A POST body is read by REST's reader when tRPC asks for it — after the caller is
 * authenticated, as on REST: a larger Content-Length is refused unread, a chunked body is cut at
 * the limit, and depth and lone surrogates are refused before `JSON.parse` results reach zod.
 * Returns the request to hand to tRPC, or the error response.
 */
export function limitTrpcRequest(request: Request, limits: Limits): Request | Response {
  const url = new URL(request.url);
  const isBatch = url.searchParams.get("batch") === "1";
  const paths = pathsOf(url);
  try {
    if (paths.length > MAX_TRPC_BATCH_SIZE) {
      throw new PromptrunError(
        "invalid",
        `a batch holds at most ${MAX_TRPC_BATCH_SIZE} calls; this one has ${paths.length}`,
      );
    }
    checkQueryJson(url, limits);
    if (request.method === "POST") {
      if (!isJsonContentType(request.headers.get("content-type"))) {
        throw new PromptrunError("unsupported_media_type", "Content-Type must be application/json");
      }
      // tRPC reads the body with `request.json()`: this bounded reader takes its place.
      Object.defineProperty(request, "json", {
        value: async (): Promise<unknown> => {
          const bytes = await readBodyBytes(request, limits.maxBodyBytes);
          // No body: no input (a procedure without one), as tRPC reads it.
          return bytes.byteLength === 0 ? undefined : parseJsonBody(bytes, limits.maxJsonDepth);
        },
      });
    }
    return request;
  } catch (error) {
    if (!PromptrunError.isInstance(error)) throw error;
    return trpcErrorResponse(error, paths, isBatch);
  }
}
