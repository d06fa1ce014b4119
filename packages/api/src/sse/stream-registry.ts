import type { endEventSchema } from "@promptrun/contract";
import type { z } from "zod";

export type EndReason = z.infer<typeof endEventSchema>["reason"];

/** Something long-lived that can be told to end (an SSE stream, a tRPC subscription). */
export interface EndableStream {
  end(reason: EndReason): void;
}

export interface StreamRegistry {
  /** Tracks a stream until the returned function is called. */
  add(stream: EndableStream): () => void;
  /** Stops tracking a stream (same as calling what `add` returned). */
  remove(stream: EndableStream): void;
  /** Ends every open stream (each sends `end` with the reason); returns how many there were. */
  closeAll(reason: EndReason): number;
  readonly size: number;
}

export function createStreamRegistry(): StreamRegistry {
  const streams = new Set<EndableStream>();
  return {
    add(stream) {
      streams.add(stream);
      return () => {
        streams.delete(stream);
      };
    },
    remove(stream) {
      streams.delete(stream);
    },
    closeAll(reason) {
      const open = [...streams];
      for (const stream of open) stream.end(reason);
      return open.length;
    },
    get size() {
      return streams.size;
    },
  };
}
