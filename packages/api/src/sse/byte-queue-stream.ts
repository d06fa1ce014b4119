import { type Flushable, joinChunks, scheduleFlush } from "./flush-scheduler.ts";

export type WriteOutcome = "written" | "overflow" | "closed";

/** Who owns the queue: told when the reader goes away (client disconnect). */
export interface ByteQueueOwner {
  onCancel(): void;
}

/**
 * A pull-based byte stream with its own bounded queue. The response writer pulls only when the
 * socket can take more, so the backlog is exactly what this subscriber has not yet consumed and a
 * slow reader never grows memory past `maxQueuedBytes` (nor slows the writers).
 *
 * Writes are coalesced: a pull takes everything queued as one chunk, and a write to a waiting
 * reader is handed over at the end of the event-loop turn (scheduleFlush) together with whatever
 * else the turn produced. A socket write costs about the same for one event or several.
 *
 * One object per subscriber (it is also the stream's underlying source and the flush target): no
 * closures, and the chunk list exists only while two or more chunks wait, so an idle subscriber
 * holds no array. Chunks are shared bytes (never copied per subscriber).
 */
export class ByteQueueStream implements Flushable {
  readonly stream: ReadableStream<Uint8Array>;
  /** Id of the last tagged chunk the response writer has taken (undefined before any). */
  lastTakenEventId: string | undefined = undefined;
  /** Bytes accepted but not yet taken by the response writer. */
  queuedBytes = 0;
  /** Largest backlog seen over the stream's life (observability and tests). */
  peakQueuedBytes = 0;
  /** The only queued chunk, or null when none or several (then in `chunks`). */
  private single: Uint8Array | null = null;
  private chunks: Uint8Array[] | null = null;
  /** Id of the newest tagged chunk queued. */
  private queuedEventId: string | undefined = undefined;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  private readerWaiting = false;
  private finishing = false;
  private closed = false;

  constructor(
    private readonly maxQueuedBytes: number,
    private readonly owner: ByteQueueOwner,
  ) {
    // highWaterMark 0: pull() runs only while the writer is waiting for data.
    this.stream = new ReadableStream<Uint8Array>(this, { highWaterMark: 0 });
  }

  /**
   * Queues a chunk; `overflow` (nothing queued) when the backlog would exceed the limit. `eventId`
   * tags the chunk so `lastTakenEventId` can tell how far the reader has got.
   */
  write(chunk: Uint8Array, eventId?: string): WriteOutcome {
    if (this.closed || this.finishing) return "closed";
    if (this.queuedBytes + chunk.byteLength > this.maxQueuedBytes) return "overflow";
    this.enqueue(chunk, eventId);
    return "written";
  }

  /**
   * Ends the stream after `lastChunk`. With `discardBacklog` the queued chunks are released at once
   * (a stalled reader then holds only `lastChunk`); otherwise they are delivered first.
   */
  finish(lastChunk: Uint8Array, options: { discardBacklog: boolean }): void {
    if (this.closed || this.finishing) return;
    this.finishing = true;
    if (options.discardBacklog) this.discardBacklog();
    this.enqueue(lastChunk, undefined);
  }

  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = controller;
  }

  pull(): void {
    if (this.queuedBytes === 0 && this.single === null && this.chunks === null) {
      this.readerWaiting = true;
      return;
    }
    this.deliverQueued();
  }

  cancel(): void {
    this.closed = true;
    this.discardBacklog();
    this.owner.onCancel();
  }

  flush(): void {
    if (this.readerWaiting) this.deliverQueued();
  }

  private enqueue(chunk: Uint8Array, eventId: string | undefined): void {
    const wasEmpty = this.single === null && this.chunks === null;
    if (wasEmpty) this.single = chunk;
    else if (this.chunks === null) {
      this.chunks = [this.single as Uint8Array, chunk];
      this.single = null;
    } else this.chunks.push(chunk);
    if (eventId !== undefined) this.queuedEventId = eventId;
    this.queuedBytes += chunk.byteLength;
    if (this.queuedBytes > this.peakQueuedBytes) this.peakQueuedBytes = this.queuedBytes;
    if (this.readerWaiting && wasEmpty) scheduleFlush(this);
  }

  private discardBacklog(): void {
    this.single = null;
    this.chunks = null;
    this.queuedBytes = 0;
    this.queuedEventId = undefined;
  }

  /** Hands the whole backlog to the reader as one chunk. */
  private deliverQueued(): void {
    if (this.closed) return;
    // The list is not reused: joinChunks may keep it to share the joined bytes this turn.
    const chunk = this.single ?? (this.chunks === null ? null : joinChunks(this.chunks));
    if (chunk === null) return;
    this.readerWaiting = false;
    if (this.queuedEventId !== undefined) this.lastTakenEventId = this.queuedEventId;
    this.discardBacklog();
    this.controller?.enqueue(chunk);
    if (this.finishing) this.closeController();
  }

  private closeController(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.controller?.close();
    } catch {
      // Already closed or cancelled by the reader.
    }
  }
}

/** A ByteQueueStream whose reader going away calls `onCancel`. */
export function createByteQueueStream(options: {
  maxQueuedBytes: number;
  /** The reader went away (client disconnect). */
  onCancel: () => void;
}): ByteQueueStream {
  return new ByteQueueStream(options.maxQueuedBytes, options);
}
