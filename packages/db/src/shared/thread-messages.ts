import type { MemoryPart } from "@promptrun/contract";
import type { ImportedMessage, StoredMessage } from "@promptrun/core";
import { type AnyColumn, and, eq, gt, type SQL } from "drizzle-orm";
import { decodeCursor } from "./cursor.ts";

/** A messages row as both stores select it for a thread's REST read. */
export interface MessageRow {
  seq: number;
  runId: string | null;
  externalId: string | null;
  channel: string;
  role: "user" | "assistant" | "tool";
  content: string;
  parts: MemoryPart[] | null;
  createdAt: Date;
}

export const toStoredMessage = (row: MessageRow): StoredMessage => ({
  runId: row.runId,
  channel: row.channel,
  role: row.role,
  content: row.content,
  ...(row.parts === null ? {} : { parts: row.parts }),
  ...(row.externalId === null ? {} : { externalId: row.externalId }),
  createdAt: row.createdAt,
});

/** The seq after which a page starts (keyset on insertion order); -1 without a cursor. */
export const afterSeqOf = (cursor: string | null | undefined): number =>
  cursor ? decodeCursor(cursor, ["number"] as const)[0] : -1;

/** The columns of a messages table (either dialect) that a thread page reads by. */
interface MessageColumns {
  tenantId: AnyColumn;
  threadId: AnyColumn;
  channel: AnyColumn;
  seq: AnyColumn;
}

/** One page of a (tenant, thread, channel)'s messages: those after the cursor's seq. */
export const threadPageCondition = (
  messages: MessageColumns,
  tenantId: string,
  threadId: string,
  channel: string,
  cursor: string | null | undefined,
): SQL | undefined =>
  and(
    eq(messages.tenantId, tenantId),
    eq(messages.threadId, threadId),
    eq(messages.channel, channel),
    gt(messages.seq, afterSeqOf(cursor)),
  );

/** The rows of an import (docs/PRODUCT-RULES.md "Thread memory"): no run, the import's time by default. */
export const importRows = (
  tenantId: string,
  threadId: string,
  channel: string,
  imported: readonly ImportedMessage[],
  now: Date,
) =>
  imported.map((message) => ({
    tenantId,
    threadId,
    channel,
    runId: null,
    externalId: message.externalId ?? null,
    role: message.role,
    content: message.content,
    createdAt: message.createdAt ?? now,
  }));
