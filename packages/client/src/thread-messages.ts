import {
  type ThreadImportRequest,
  type ThreadImportResult,
  type ThreadMessagesPage,
  threadImportResultSchema,
  threadMessagesPageSchema,
} from "@promptrun/contract";
import { type ClientRequest, queryString } from "./client-request.ts";

/** Options of `threads.messages` (GET /api/v1/threads/{thread}/messages). */
export interface ThreadMessagesOptions {
  /** Default `default`. */
  channel?: string;
  cursor?: string | null;
  /** 1–200, default 50. */
  limit?: number;
  signal?: AbortSignal;
}

const messagesPath = (thread: string) => `/api/v1/threads/${encodeURIComponent(thread)}/messages`;

/** One page of a thread channel's messages, oldest first (empty for an unknown thread). */
export const listThreadMessages = (
  request: ClientRequest,
  thread: string,
  { channel, cursor, limit, signal }: ThreadMessagesOptions = {},
): Promise<ThreadMessagesPage> =>
  request(
    "GET",
    `${messagesPath(thread)}${queryString({ channel, cursor: cursor ?? undefined, limit })}`,
    threadMessagesPageSchema,
    { signal },
  );

/** Imports history into a thread's memory; a message with an externalId already there is skipped. */
export const importThreadMessages = (
  request: ClientRequest,
  thread: string,
  body: ThreadImportRequest,
  options: { signal?: AbortSignal } = {},
): Promise<ThreadImportResult> =>
  request("POST", messagesPath(thread), threadImportResultSchema, { body, signal: options.signal });
