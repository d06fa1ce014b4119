import type { Socket } from "bun";
import { ChunkedDecoder } from "./http-chunked-decoder.ts";
import { SseTextParser } from "./sse-text-parser.ts";

export interface SseSocketOptions {
  host: string;
  port: number;
  /** Path and query, e.g. `/stream/<thread>`. */
  path: string;
  headers?: Record<string, string>;
  onEvent(event: string, data: string): void;
  /** The connection ended (server closed, error, or close() called). */
  onClose?(reason: string): void;
}

export interface SseSocket {
  /** HTTP status of the response, once its head has arrived. */
  readonly status: Promise<number>;
  close(): void;
}

interface ConnectionState {
  head: Uint8Array | null;
  chunked: ChunkedDecoder | null;
  parser: SseTextParser;
  decoder: TextDecoder;
  resolveStatus(status: number): void;
  rejectStatus(error: Error): void;
  options: SseSocketOptions;
  closed: boolean;
  /** Ends the socket once the response body is complete (keep-alive would hold it open). */
  endSocket(): void;
}

const HEAD_END = Uint8Array.of(13, 10, 13, 10);

function indexOfSequence(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (
    let index = haystack.indexOf(needle[0]!);
    index !== -1;
    index = haystack.indexOf(needle[0]!, index + 1)
  ) {
    for (let offset = 1; offset < needle.length; offset++)
      if (haystack[index + offset] !== needle[offset]) continue outer;
    return index;
  }
  return -1;
}

function concat(left: Uint8Array, right: Uint8Array): Uint8Array {
  const joined = new Uint8Array(left.length + right.length);
  joined.set(left);
  joined.set(right, left.length);
  return joined;
}

function feedBody(state: ConnectionState, bytes: Uint8Array): void {
  const pieces = state.chunked ? state.chunked.feed(bytes) : [bytes];
  for (const piece of pieces) state.parser.feed(state.decoder.decode(piece, { stream: true }));
  if (state.chunked?.finished) {
    ended(state, "response ended");
    state.endSocket();
  }
}

function onData(state: ConnectionState, bytes: Uint8Array): void {
  if (state.head === null) {
    feedBody(state, bytes);
    return;
  }
  const buffered = concat(state.head, bytes);
  const end = indexOfSequence(buffered, HEAD_END);
  if (end === -1) {
    state.head = buffered;
    return;
  }
  const head = new TextDecoder().decode(buffered.subarray(0, end));
  state.head = null;
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
  if (/^transfer-encoding:\s*chunked\s*$/im.test(head)) state.chunked = new ChunkedDecoder();
  state.resolveStatus(status);
  feedBody(state, buffered.subarray(end + 4));
}

function ended(state: ConnectionState, reason: string): void {
  if (state.closed) return;
  state.closed = true;
  state.rejectStatus(new Error(`connection ended before a response: ${reason}`));
  state.options.onClose?.(reason);
}

/**
 * A Server-Sent Events subscriber on a raw TCP socket (HTTP/1.1, chunked or not). Far cheaper
 * than fetch per connection, so one process can hold thousands of subscribers.
 */
export async function openSseSocket(options: SseSocketOptions): Promise<SseSocket> {
  let resolveStatus: (status: number) => void = () => {};
  let rejectStatus: (error: Error) => void = () => {};
  const status = new Promise<number>((resolve, reject) => {
    resolveStatus = resolve;
    rejectStatus = reject;
  });
  status.catch(() => undefined);
  const state: ConnectionState = {
    head: new Uint8Array(0),
    chunked: null,
    parser: new SseTextParser(options.onEvent),
    decoder: new TextDecoder(),
    resolveStatus,
    rejectStatus,
    options,
    closed: false,
    endSocket: () => socket?.end(),
  };
  const headers = {
    host: `${options.host}:${options.port}`,
    accept: "text/event-stream",
    ...options.headers,
  };
  const request = `GET ${options.path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n`;
  let socket: Socket<ConnectionState> | undefined;
  socket = await Bun.connect<ConnectionState>({
    hostname: options.host,
    port: options.port,
    data: state,
    socket: {
      open(connection) {
        connection.write(request);
      },
      data(connection, bytes) {
        onData(connection.data, bytes);
      },
      close(connection) {
        ended(connection.data, "closed");
      },
      error(connection, error) {
        ended(connection.data, error.message);
      },
      end(connection) {
        ended(connection.data, "server ended the connection");
        connection.end();
      },
    },
  });
  return {
    status,
    close() {
      ended(state, "closed by client");
      socket?.end();
    },
  };
}
