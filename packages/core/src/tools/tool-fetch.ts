import { createGuardedFetch } from "../security/url-guard.ts";
import { ToolFailure } from "./tool-failure.ts";

/** The scheme, name and port a request goes to (a pinned request keeps the name in `Host`). */
const originOf = (request: Request): string => {
  const url = new URL(request.url);
  return `${url.protocol}//${request.headers.get("host") ?? url.host}`;
};

/**
 * The fetch of server tools (http requests, MCP sessions): the tenant-URL guard (private
 * addresses refused at connect time on every redirect hop unless allowed, docs/SECURITY.md), and
 * the prompt's own headers (`tenantHeaders`, names) dropped on a hop to another origin, so a
 * redirect never carries the tenant's key elsewhere. Nothing else is added: the server's own
 * credentials never go out here.
 */
export function createToolFetch(options: {
  allowPrivate: boolean;
  tenantHeaders: readonly string[];
  transport?: typeof fetch | undefined;
}): typeof fetch {
  const transport = options.transport ?? fetch;
  const toolFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    // Per call: the first hop's origin is the one the headers were written for.
    let firstOrigin: string | null = null;
    const hop = (async (request: Request, hopInit?: RequestInit) => {
      const origin = originOf(request);
      firstOrigin ??= origin;
      if (origin === firstOrigin || options.tenantHeaders.length === 0) return transport(request, hopInit);
      const headers = new Headers(request.headers);
      for (const name of options.tenantHeaders) if (name.toLowerCase() !== "host") headers.delete(name);
      // A fresh Request: Bun keeps the old headers in `new Request(request, {headers})` when the new ones are empty.
      const body = request.body ? await request.arrayBuffer() : null;
      const stripped = new Request(request.url, {
        method: request.method,
        headers,
        body,
        signal: request.signal,
      });
      return transport(stripped, hopInit);
    }) as typeof fetch;
    return createGuardedFetch({ allowPrivate: options.allowPrivate, fetch: hop })(input, init);
  };
  return toolFetch as typeof fetch;
}

const tooLarge = (maxBytes: number) => new ToolFailure(`response exceeds ${maxBytes} bytes`);

/**
 * Reads a response body up to `maxBytes`: a larger declared length is refused unread, a longer
 * stream is cut off (cancelled) as soon as it passes the limit.
 */
export async function readCapped(
  response: Response,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(maxBytes);
  }
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array();
  const stop = () => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      signal.throwIfAborted();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    signal.removeEventListener("abort", stop);
  }
  return Buffer.concat(chunks);
}

/**
 * The same response with a body that errors once more than `maxBytes` have passed (an MCP
 * server's answers and event streams are read by the SDK, so the cap sits in the stream).
 * `onTooLarge` hears of it: the SDK reports stream errors only through its `onerror`.
 */
export function cappedResponse(
  response: Response,
  maxBytes: number,
  onTooLarge: (error: Error) => void,
): Response {
  if (!response.body) return response;
  let total = 0;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > maxBytes) {
        const error = tooLarge(maxBytes);
        onTooLarge(error);
        controller.error(error);
        return;
      }
      controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(limit), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
