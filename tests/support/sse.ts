import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface ReceivedEvent {
  id: string | undefined;
  event: string;
  data: Record<string, unknown>;
}

/** A real SSE connection over fetch: collects parsed events until closed. */
export class SseConnection {
  readonly events: ReceivedEvent[] = [];
  readonly status: number;
  readonly headers: Headers;
  private readonly controller: AbortController;
  private waiters: Array<() => void> = [];
  readonly done: Promise<void>;

  private constructor(response: Response, controller: AbortController) {
    this.status = response.status;
    this.headers = response.headers;
    this.controller = controller;
    const parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        this.events.push({
          id: message.id,
          event: message.event ?? "message",
          data: JSON.parse(message.data) as Record<string, unknown>,
        });
        for (const wake of this.waiters.splice(0)) wake();
      },
    });
    this.done = (async () => {
      if (!response.body) return;
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted
      }
      for (const wake of this.waiters.splice(0)) wake();
    })();
  }

  static async open(
    url: string,
    init: { token?: string; lastEventId?: string; query?: boolean } = {},
  ): Promise<SseConnection> {
    const controller = new AbortController();
    const headers: Record<string, string> = { accept: "text/event-stream" };
    let target = url;
    if (init.token && !init.query) headers.authorization = `Bearer ${init.token}`;
    if (init.token && init.query)
      target += `${url.includes("?") ? "&" : "?"}token=${encodeURIComponent(init.token)}`;
    if (init.lastEventId) headers["last-event-id"] = init.lastEventId;
    const response = await fetch(target, { headers, signal: controller.signal });
    return new SseConnection(response, controller);
  }

  /** Resolves when an event matching the predicate has arrived (or throws after timeoutMs). */
  async waitFor(predicate: (event: ReceivedEvent) => boolean, timeoutMs = 20_000): Promise<ReceivedEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find(predicate);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(
          `no matching SSE event after ${timeoutMs} ms; got ${this.events.map((e) => e.event).join(",")}`,
        );
      await Promise.race([new Promise<void>((resolve) => this.waiters.push(resolve)), Bun.sleep(100)]);
    }
  }

  close(): void {
    this.controller.abort();
  }
}

/** The text a subscriber assembles for a run: deltas in index order, restarted on a retry's run.started. */
export function assembleRunText(events: ReceivedEvent[], runId: string): string {
  let text = "";
  for (const event of events) {
    if (event.data.runId !== runId) continue;
    if (event.event === "run.started") text = "";
    if (event.event === "run.token") text += String(event.data.delta);
  }
  return text;
}
