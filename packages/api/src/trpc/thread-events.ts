import type { StreamEvent, threadSubscribeInputSchema } from "@promptrun/contract";
import { rateLimited, type StreamTokenClaims } from "@promptrun/core";
import { type TrackedEnvelope, tracked } from "@trpc/server";
import type { z } from "zod";
import { threadStreamKey } from "../http/thread-stream-cap.ts";
import { encodeDeliveredEvent, isSafeEventId } from "../sse/encode.ts";
import { openThreadFeed, type ThreadFeed } from "../sse/thread-feed.ts";
import { watchTokenExpiry } from "../sse/watch-token-expiry.ts";
import type { TrpcContext } from "./context.ts";
import { createSubscriptionInbox } from "./subscription-inbox.ts";

/**
 * What `thread.onEvents` yields: `{ id, data: StreamEvent }`, every event tracked with a non-empty
 * id (a reconnect resumes after it). Run events carry their bus id; `ready` and `reset` the
 * position the feed gives them; `end` the id of the last event yielded before it.
 */
export type ThreadEventMessage = TrackedEnvelope<StreamEvent>;

/** What a refused subscriber is told to wait, as GET /stream/:thread's `Retry-After`. */
const STREAM_CAP_RETRY_AFTER_SECONDS = 5;

/** Control events are tiny; a fixed estimate keeps the byte accounting honest without encoding them. */
const CONTROL_EVENT_BYTES = 128;

/**
 * The events of one thread for a stream-token holder: the same sequence as GET /stream/:thread
 * (ready, replay or reset, live events, end), resumable with `lastEventId`. Counts against the
 * thread's open-stream cap until it ends; past the cap it fails with TOO_MANY_REQUESTS.
 */
export async function* threadEvents(
  ctx: TrpcContext,
  input: z.infer<typeof threadSubscribeInputSchema>,
  signal: AbortSignal | undefined,
): AsyncGenerator<ThreadEventMessage, void, unknown> {
  const claims = await ctx.services.streamTokens.verify(input.token, input.thread);
  const release = ctx.streamCap.reserve(threadStreamKey(claims.tenantId, claims.threadId));
  if (release === null)
    throw rateLimited("too many open streams on this thread", STREAM_CAP_RETRY_AFTER_SECONDS);
  try {
    yield* verifiedThreadEvents(ctx, input, claims, signal);
  } finally {
    release();
  }
}

/** threadEvents once the token is verified and a slot is held. */
async function* verifiedThreadEvents(
  ctx: TrpcContext,
  input: z.infer<typeof threadSubscribeInputSchema>,
  claims: StreamTokenClaims,
  signal: AbortSignal | undefined,
): AsyncGenerator<ThreadEventMessage, void, unknown> {
  const { services, config } = ctx;
  const lastEventId = input.lastEventId && isSafeEventId(input.lastEventId) ? input.lastEventId : null;
  const inbox = createSubscriptionInbox<ThreadEventMessage>(config.subscriberBufferBytes);
  let feed: ThreadFeed | null = null;
  ctx.metrics?.streamOpened();
  const unregister = ctx.subscriptions.add({ end: (reason) => inbox.end(reason, { discardBacklog: false }) });
  const stopWatchingToken = watchTokenExpiry({
    streamTokens: services.streamTokens,
    token: input.token,
    threadId: claims.threadId,
    expiresAt: claims.expiresAt,
    intervalMs: config.pingIntervalMs,
    onExpired: (reason) => inbox.end(reason, { discardBacklog: false }),
  });

  try {
    feed = openThreadFeed({
      bus: services.events,
      tenantId: claims.tenantId,
      threadId: claims.threadId,
      lastEventId,
      maxReplayBytes: config.subscriberBufferBytes / 2,
      onItem: (item) => {
        if (item.kind === "control") {
          inbox.push({ value: tracked(item.id, item.event), bytes: CONTROL_EVENT_BYTES });
          return;
        }
        const { delivered } = item;
        inbox.push({
          value: tracked(delivered.id, delivered.event),
          bytes: encodeDeliveredEvent(delivered).byteLength,
        });
      },
    });
    // `ready` (always first) replaces it; "0" only if the feed ended before that.
    let position = lastEventId ?? "0";
    for await (const next of inbox.drain(signal)) {
      if ("end" in next) {
        yield tracked(position, { type: "end", data: { reason: next.end } });
        return;
      }
      position = next.value[0];
      yield next.value;
    }
  } finally {
    feed?.close();
    stopWatchingToken();
    unregister();
    ctx.metrics?.streamClosed();
  }
}
