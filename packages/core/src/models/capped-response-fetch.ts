import { PromptrunError } from "../errors.ts";

export interface ResponseCaps {
  /** Bytes of one response body (one attempt), status and error bodies included. */
  maxBodyBytes: number;
  /** Bytes between two newlines: an SSE line, or a whole body sent without one. */
  maxLineBytes: number;
}

const NEWLINE = 0x0a;

/** Thrown through the body stream; the attempt classifier treats it as final (not retried). */
export const responseTooLarge = (message: string) =>
  new PromptrunError("payload_too_large", `provider response too large: ${message}`);

/**
 * Wraps a fetch so every response body is counted as it is read: past `maxBodyBytes` in all, or
 * `maxLineBytes` without a newline, the body errors (and the connection is cancelled) instead of
 * growing a buffer without end. It sits around whatever transport the gateway uses (direct or
 * the tenant-URL guard), so both the SDK path and the lean SSE reader are covered.
 */
export function capResponseBodies(transport: typeof fetch, caps: ResponseCaps): typeof fetch {
  const capped = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const response = await transport(input, init);
    if (response.body === null) return response;
    const body = response.body.pipeThrough(countingStream(caps));
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return Object.assign(capped, { preconnect: transport.preconnect }) as typeof fetch;
}

function countingStream(caps: ResponseCaps): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  /** Bytes since the last newline, across chunks. */
  let line = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > caps.maxBodyBytes) {
        controller.error(responseTooLarge(`the body passed ${caps.maxBodyBytes} bytes`));
        return;
      }
      let start = 0;
      for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
        if (line + newline - start > caps.maxLineBytes) break;
        line = 0;
        start = newline + 1;
      }
      line += chunk.byteLength - start;
      if (line > caps.maxLineBytes) {
        controller.error(responseTooLarge(`a line passed ${caps.maxLineBytes} bytes without a newline`));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}
