import { isUuid, type ThreadMessage } from "@promptrun/contract";
import { notFound } from "../errors.ts";
import type { Clock, Store } from "../ports.ts";
import type { PageInput, ThreadService } from "../services.ts";
import { clampPage, countFitting, decodeOffsetCursor, encodeOffsetCursor, MAX_PAGE_BYTES } from "./page.ts";
import { importThreadMessages, threadMessages } from "./thread-memory-service.ts";

export function createThreadService(dependencies: {
  store: Store;
  clock: Clock;
  maxPageBytes?: number;
}): ThreadService {
  const { store } = dependencies;
  const maxPageBytes = dependencies.maxPageBytes ?? MAX_PAGE_BYTES;
  return {
    messages: (tenantId, threadId, request) => threadMessages(store, tenantId, threadId, request),
    import: (tenantId, threadId, body) => importThreadMessages(dependencies, tenantId, threadId, body),
    async get(tenantId, threadId, page: PageInput = { limit: 50 }) {
      const { cursor, limit } = clampPage(page);
      const offset = decodeOffsetCursor(cursor);
      const thread = isUuid(threadId) ? await store.runs.getThread(tenantId, threadId.toLowerCase()) : null;
      if (!thread) throw notFound(`thread '${threadId}' not found`);
      // Messages are append-only and ordered, so an offset stays valid between pages.
      const window = thread.messages.slice(offset, offset + limit).map((message) => ({
        channel: message.channel,
        message: {
          role: message.role,
          content: message.content,
          runId: message.runId,
          createdAt: message.createdAt.toISOString(),
        } satisfies ThreadMessage,
      }));
      const taken = window.slice(0, countFitting(window, maxPageBytes));
      const channels: Record<string, ThreadMessage[]> = {};
      for (const { channel, message } of taken) {
        const list = channels[channel] ?? [];
        list.push(message);
        channels[channel] = list;
      }
      const next = offset + taken.length;
      return {
        id: thread.id,
        createdAt: thread.createdAt.toISOString(),
        channels,
        nextCursor: next < thread.messages.length ? encodeOffsetCursor(next) : null,
      };
    },
  };
}
