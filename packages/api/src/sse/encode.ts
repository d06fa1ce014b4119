import type { StreamEvent } from "@promptrun/contract";
import type { DeliveredThreadEvent } from "@promptrun/core";

const encoder = new TextEncoder();

/** One SSE message: `id`, `event`, one `data` line (JSON never contains a raw newline). */
export function encodeSseMessage(id: string, event: StreamEvent): Uint8Array {
  return encoder.encode(`id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`);
}

/** Heartbeat comment: keeps proxies and Bun's idle timer from closing a quiet stream. */
export const pingComment: Uint8Array = encoder.encode(": ping\n\n");

/**
 * The bus hands the same event object to every listener, so the bytes are built once per event
 * and shared by every subscriber (and by the tRPC subscription's byte accounting).
 */
const encodedByEvent = new WeakMap<DeliveredThreadEvent, Uint8Array>();

export function encodeDeliveredEvent(delivered: DeliveredThreadEvent): Uint8Array {
  let bytes = encodedByEvent.get(delivered);
  if (bytes === undefined) {
    bytes = encodeSseMessage(delivered.id, delivered.event);
    encodedByEvent.set(delivered, bytes);
  }
  return bytes;
}

/** Ids are echoed into `id:` lines: refuse anything that could break the framing. */
export function isSafeEventId(id: string): boolean {
  return id.length <= 200 && !/[\0\r\n]/.test(id);
}
