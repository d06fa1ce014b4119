import { isUuid, type ThreadMessage } from "@promptrun/contract";
import { notFound } from "../errors.ts";
import type { Store } from "../ports.ts";
import type { ThreadService } from "../services.ts";

export function createThreadService(dependencies: { store: Store }): ThreadService {
  const { store } = dependencies;
  return {
    async get(tenantId, threadId) {
      const thread = isUuid(threadId) ? await store.runs.getThread(tenantId, threadId.toLowerCase()) : null;
      if (!thread) throw notFound(`thread '${threadId}' not found`);
      const channels: Record<string, ThreadMessage[]> = {};
      for (const message of thread.messages) {
        const list = channels[message.channel] ?? [];
        list.push({
          role: message.role,
          content: message.content,
          runId: message.runId,
          createdAt: message.createdAt.toISOString(),
        });
        channels[message.channel] = list;
      }
      return { id: thread.id, createdAt: thread.createdAt.toISOString(), channels };
    },
  };
}
