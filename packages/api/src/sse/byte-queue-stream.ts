import { type Flushable, joinChunks, scheduleFlush } from "./flush-scheduler.ts";

export type WriteOutcome = "written" | "overflow" | "closed";

export interface ByteQueueStream {
  readonly stream: ReadableStream<Uint8Array>;
  /**
   * Queues a chunk; `overflow` (nothing queued) when the backlog would exceed the limit. `eventId`
   * tags the chunk so `lastTakenEventId` can tell how far the reader has got.
   */
  write(chunk: Uint8Array, eventId?: string): WriteOutcome;
  /**
   * Ends the stream after `lastChunk`. With `discardBacklog` the queued chunks are released at once
   * (a stalled reader then holds only `lastChunk`); otherwise they are delivered first.
   */
  finish(lastChunk: Uint8Array, options: { discardBacklog: boolean }): void;
  /** Id of the last tagged chunk the response writer has taken (undefined before any). */
  readonly lastTakenEventId: string | undefined;
  /** Bytes accepted but not yet taken by the response writer. */
  readonly queuedBytes: number;
  /** Largest backlog seen over the stream's life (observability and tests). */
  readonly peakQueuedBytes: number;
}

/**
 * A pull-based byte stream with its own bounded queue. The response writer pulls only when the
 * socket can take more, so the backlog is exactly what this subscriber has not yet consumed and a
 * slow reader never grows memory past `maxQueuedBytes` (nor slows the writers).
 *
 * Writes are coalesced: a pull takes everything queued as one chunk, and a write to a waiting
 * reader is handed over at the end of the event-loop turn (scheduleFlush) together with whatever
 * else the turn produced. A socket write costs about the same for one event or several.
 */
export function createByteQueueStream(options: {
  maxQueuedBytes: number;
  /** The reader went away (client disconnect). */
  onCancel: () => void;
}): ByteQueueStream {
  const queue: Uint8Array[] = [];
  /** Id of the newest tagged chunk in `queue`. */
  let queuedEventId: string | undefined;
  let queuedBytes = 0;
  let peakQueuedBytes = 0;
  let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  let readerWaiting = false;
  let lastTakenEventId: string | undefined;
  let finishing = false;
  let closed = false;

  const closeController = () => {
    if (closed) return;
    closed = true;
    try {
      controller?.close();
    } catch {
      // Already closed or cancelled by the reader.
    }
  };

  const discardBacklog = () => {
    queue.length = 0;
    queuedBytes = 0;
    queuedEventId = undefined;
  };

  /** Hands the whole backlog to the reader as one chunk. */
  const deliverQueued = () => {
    if (closed || queue.length === 0) return;
    const chunk = joinChunks(queue);
    readerWaiting = false;
    if (queuedEventId !== undefined) lastTakenEventId = queuedEventId;
    discardBacklog();
    controller?.enqueue(chunk);
    if (finishing) closeController();
  };

  const flushable: Flushable = {
    flush() {
      if (readerWaiting) deliverQueued();
    },
  };

  const stream = new ReadableStream<Uint8Array>(
    {
      start(streamController) {
        controller = streamController;
      },
      pull() {
        if (queue.length === 0) {
          readerWaiting = true;
          return;
        }
        deliverQueued();
      },
      cancel() {
        closed = true;
        discardBacklog();
        options.onCancel();
      },
    },
    // highWaterMark 0: pull() runs only while the writer is waiting for data.
    { highWaterMark: 0 },
  );

  const enqueue = (chunk: Uint8Array, eventId: string | undefined) => {
    queue.push(chunk);
    if (eventId !== undefined) queuedEventId = eventId;
    queuedBytes += chunk.byteLength;
    if (queuedBytes > peakQueuedBytes) peakQueuedBytes = queuedBytes;
    if (readerWaiting && queue.length === 1) scheduleFlush(flushable);
  };

  return {
    stream,
    write(chunk, eventId) {
      if (closed || finishing) return "closed";
      if (queuedBytes + chunk.byteLength > options.maxQueuedBytes) return "overflow";
      enqueue(chunk, eventId);
      return "written";
    },
    finish(lastChunk, options) {
      if (closed || finishing) return;
      finishing = true;
      if (options.discardBacklog) discardBacklog();
      enqueue(lastChunk, undefined);
    },
    get lastTakenEventId() {
      return lastTakenEventId;
    },
    get queuedBytes() {
      return queuedBytes;
    },
    get peakQueuedBytes() {
      return peakQueuedBytes;
    },
  };
}
