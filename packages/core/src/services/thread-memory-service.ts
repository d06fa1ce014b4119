import {
  isUuid,
  type ThreadImportResult,
  type ThreadMemoryMessage,
  type ThreadMessagesPage,
  threadImportRequestSchema,
  threadMessagesRequestSchema,
} from "@promptrun/contract";
import { invalid, notFound } from "../errors.ts";
import type { Clock, Store, StoredMessage } from "../ports.ts";
import { formatValidationError } from "./format-validation-error.ts";

/** A path's thread id: a malformed one is a 404 (docs/PRODUCT-RULES.md "Status codes and error order"). */
const threadIdOf = (threadId: string): string => {
  if (!isUuid(threadId)) throw notFound(`thread '${threadId}' not found`);
  return threadId.toLowerCase();
};

const toMemoryMessage = (message: StoredMessage): ThreadMemoryMessage => ({
  runId: message.runId,
  channel: message.channel,
  role: message.role,
  content: message.content,
  ...(message.parts ? { parts: message.parts } : {}),
  ...(message.externalId !== undefined && message.externalId !== null
    ? { externalId: message.externalId }
    : {}),
  createdAt: message.createdAt.toISOString(),
});

/** A channel's messages, oldest first; an unknown thread (or another tenant's) has none. */
export async function threadMessages(
  store: Store,
  tenantId: string,
  threadId: string,
  request: unknown,
): Promise<ThreadMessagesPage> {
  const id = threadIdOf(threadId);
  const parsed = threadMessagesRequestSchema.safeParse(request);
  if (!parsed.success) throw invalid(formatValidationError(parsed.error, "query"));
  const { channel, cursor, limit } = parsed.data;
  const page = await store.runs.listMessages(tenantId, id, channel, { cursor: cursor ?? null, limit });
  return { items: page.items.map(toMemoryMessage), nextCursor: page.nextCursor };
}

/** Imports messages into a channel's memory in one transaction (docs/PRODUCT-RULES.md "Thread memory"). */
export async function importThreadMessages(
  dependencies: { store: Store; clock: Clock },
  tenantId: string,
  threadId: string,
  body: unknown,
): Promise<ThreadImportResult> {
  const id = threadIdOf(threadId);
  const parsed = threadImportRequestSchema.safeParse(body);
  if (!parsed.success) throw invalid(formatValidationError(parsed.error));
  const { channel = "default", messages } = parsed.data;
  const imported = messages.map(({ role, content, externalId, createdAt }) => ({
    role,
    content,
    externalId,
    createdAt: createdAt === undefined ? undefined : new Date(createdAt),
  }));
  return dependencies.store.runs.importMessages(tenantId, id, channel, imported, dependencies.clock.now());
}
