import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface SseReader {
  response: Response;
  messages: EventSourceMessage[];
  comments: string[];
  /** Raw text received so far. */
  text(): string;
  /** Resolves with the messages once `count` have arrived (rejects after `timeoutMs`). */
  waitForMessages(count: number, timeoutMs?: number): Promise<EventSourceMessage[]>;
  waitForComments(count: number, timeoutMs?: number): Promise<string[]>;
  /** Resolves when the server ends the body. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** Reads an SSE response with eventsource-parser, the way @promptrun/client does. */
export function readSse(response: Response): SseReader {
  const messages: EventSourceMessage[] = [];
  const comments: string[] = [];
  let raw = "";
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  const parser = createParser({
    onEvent: (message) => {
      messages.push(message);
      notify();
    },
    onComment: (comment) => {
      comments.push(comment);
      notify();
    },
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const closed = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const chunk = decoder.decode(value, { stream: true });
        raw += chunk;
        parser.feed(chunk);
      }
    } catch {
      // Cancelled by close().
    }
    notify();
  })();

  const waitFor = <T>(list: T[], count: number, timeoutMs: number, what: string): Promise<T[]> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (list.length >= count) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(list.slice(0, count));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${count} ${what}; got ${list.length}: ${raw.slice(-500)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  return {
    response,
    messages,
    comments,
    text: () => raw,
    waitForMessages: (count, timeoutMs = 5_000) => waitFor(messages, count, timeoutMs, "messages"),
    waitForComments: (count, timeoutMs = 5_000) => waitFor(comments, count, timeoutMs, "comments"),
    closed,
    async close() {
      await reader.cancel().catch(() => {});
      await closed;
    },
  };
}
