import {
  type StreamTokenResponse,
  streamTokenInputSchema,
  type Thread,
  type ThreadImportResult,
  type ThreadMessagesPage,
  threadGetInputSchema,
  threadImportInputSchema,
  threadMessagesInputSchema,
  threadSubscribeInputSchema,
} from "@promptrun/contract";
import type { Procedures, TrpcRoot } from "../root.ts";
import { threadEvents } from "../thread-events.ts";

export function createThreadRouter(
  t: TrpcRoot,
  { publicProcedure, tenantProcedure, subscribedProcedure }: Procedures,
) {
  return t.router({
    /** One page of messages per channel, oldest first (cursor + limit; bounded in bytes). */
    get: tenantProcedure
      .input(threadGetInputSchema)
      .query(
        ({ ctx, input: { id, cursor, limit } }): Promise<Thread> =>
          ctx.services.threads.get(ctx.tenant.id, id, { cursor, limit }),
      ),
    /** Like GET /api/v1/threads/{thread}/messages: one channel's messages, oldest first. */
    messages: tenantProcedure
      .input(threadMessagesInputSchema)
      .query(
        ({ ctx, input: { thread, ...request } }): Promise<ThreadMessagesPage> =>
          ctx.services.threads.messages(ctx.tenant.id, thread, request),
      ),
    /** Like POST /api/v1/threads/{thread}/messages: imports history; a repeated externalId is skipped. */
    import: subscribedProcedure
      .input(threadImportInputSchema)
      .mutation(
        ({ ctx, input: { thread, ...body } }): Promise<ThreadImportResult> =>
          ctx.services.threads.import(ctx.tenant.id, thread, body),
      ),
    /** Like POST /api/v1/threads/{thread}/stream-token (subscription and rate limit checked by the service). */
    streamToken: tenantProcedure
      .input(streamTokenInputSchema)
      .mutation(
        ({ ctx, input }): Promise<StreamTokenResponse> =>
          ctx.services.streamTokens.issue(ctx.tenant, input.thread),
      ),
    /** Live events of a thread over SSE, authorised by the stream token in the input. */
    onEvents: publicProcedure
      .input(threadSubscribeInputSchema)
      .subscription(({ ctx, input, signal }) => threadEvents(ctx, input, signal)),
  });
}
