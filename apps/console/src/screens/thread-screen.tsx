import type { Page, PromptRun, ThreadMessagesPage } from "@promptrun/contract";
import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { Link, useParams, useSearchParams } from "wouter";
import { rest } from "../api/console-fetch.ts";
import { useTRPCClient } from "../api/trpc.ts";
import { formatDateTime } from "../components/figures.ts";
import { ErrorNotice } from "../components/notice.tsx";
import { ThreadMessageView } from "../components/thread-message.tsx";
import { ThreadLiveTail } from "./thread-live-tail.tsx";
import { isThreadId, ThreadPicker } from "./thread-picker.tsx";
import "./runs.css";

/** Pages of `thread.get` read to learn a thread's channels (200 messages each). */
const MAX_CHANNEL_PAGES = 50;
const MESSAGES_PAGE = 100;

type TrpcClient = ReturnType<typeof useTRPCClient>;

/**
 * A thread's creation time and channels. No endpoint lists a thread's channels: they are those of
 * its messages (tRPC `thread.get`, paged across channels) and of its runs (`GET /api/v1/promptruns`).
 */
async function threadOverview(client: TrpcClient, thread: string) {
  const channels = new Set<string>();
  let createdAt = "";
  let cursor: string | null = null;
  for (let page = 0; page < MAX_CHANNEL_PAGES; page += 1) {
    const result = await client.thread.get.query({ id: thread, cursor, limit: 200 });
    createdAt = result.createdAt;
    for (const channel of Object.keys(result.channels)) channels.add(channel);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  const runs = await rest<Page<PromptRun>>(`/promptruns?thread=${thread}&limit=200`);
  for (const run of runs.items) channels.add(run.channel);
  const sorted = [...channels].sort((a, b) =>
    a === "default" ? -1 : b === "default" ? 1 : a.localeCompare(b),
  );
  return { createdAt, channels: sorted };
}

function ChannelMessages({ thread, channel }: { thread: string; channel: string }) {
  const messages = useInfiniteQuery({
    queryKey: ["thread-messages", thread, channel],
    queryFn: ({ pageParam }) => {
      const query = new URLSearchParams({ channel, limit: String(MESSAGES_PAGE) });
      if (pageParam) query.set("cursor", pageParam);
      return rest<ThreadMessagesPage>(`/threads/${thread}/messages?${query}`);
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
  const items = messages.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <section aria-labelledby="messages-title" className="panel">
      <h2 id="messages-title">
        Messages <span className="muted">· {channel}</span>
      </h2>
      {messages.isError ? <ErrorNotice error={messages.error} /> : null}
      {messages.isPending ? <p className="loading">Loading messages…</p> : null}
      {messages.isSuccess && items.length === 0 ? (
        <p className="muted">
          No messages on this channel yet: a completed run writes its exchange here, and messages can be
          imported with <code>POST /api/v1/threads/&#123;thread&#125;/messages</code>.
        </p>
      ) : null}
      {items.length > 0 ? (
        <ol className="messages" aria-label={`Messages of channel ${channel}, oldest first`}>
          {items.map((message, index) => (
            <ThreadMessageView key={index} message={message} />
          ))}
        </ol>
      ) : null}
      {messages.hasNextPage ? (
        <button
          type="button"
          className="load-more"
          disabled={messages.isFetchingNextPage}
          onClick={() => messages.fetchNextPage()}
        >
          {messages.isFetchingNextPage ? "Loading…" : "Load newer messages"}
        </button>
      ) : null}
    </section>
  );
}

function ThreadView({ thread }: { thread: string }) {
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const [search, setSearch] = useSearchParams();
  const overview = useQuery({
    queryKey: ["thread-overview", thread],
    queryFn: () => threadOverview(client, thread),
  });
  const onRunEnded = useCallback(() => {
    queryClient.invalidateQueries({ queryKey: ["thread-messages", thread] });
    queryClient.invalidateQueries({ queryKey: ["thread-overview", thread] });
  }, [queryClient, thread]);
  const channels = overview.data?.channels ?? [];
  const channel =
    search.get("channel") ?? (channels.includes("default") ? "default" : (channels[0] ?? "default"));

  return (
    <section aria-labelledby="screen-title" className="thread-screen">
      <p className="breadcrumb">
        <Link href="/threads">Threads</Link> / <code>{thread}</code>
      </p>
      <h1 id="screen-title">Thread</h1>
      {overview.isError ? <ErrorNotice error={overview.error} /> : null}
      {overview.data ? (
        <p className="muted">
          Started {formatDateTime(overview.data.createdAt)} ·{" "}
          <Link href={`/runs?thread=${thread}`}>its runs</Link>
        </p>
      ) : null}
      {channels.length > 0 ? (
        <nav aria-label="Channels" className="channels">
          <ul>
            {channels.map((name) => (
              <li key={name}>
                <button
                  type="button"
                  className={name === channel ? "" : "ghost"}
                  aria-pressed={name === channel}
                  onClick={() => setSearch({ channel: name })}
                >
                  {name}
                </button>
              </li>
            ))}
          </ul>
        </nav>
      ) : null}
      <div className="thread-columns">
        {overview.isError ? null : <ChannelMessages thread={thread} channel={channel} />}
        <ThreadLiveTail thread={thread} onRunEnded={onRunEnded} />
      </div>
    </section>
  );
}

/** Thread (`/console/threads`, `/console/threads/:id`): its channels and messages, and a live tail of its stream. */
export function ThreadScreen() {
  const { id } = useParams<{ id?: string }>();
  if (!id) return <ThreadPicker />;
  if (!isThreadId(id)) {
    return (
      <section aria-labelledby="screen-title">
        <h1 id="screen-title">Thread</h1>
        <p className="notice notice-error" role="alert">
          "{id}" is not a thread id: a thread id is a UUID.
        </p>
        <p>
          <Link href="/threads">Open another thread</Link>
        </p>
      </section>
    );
  }
  return <ThreadView key={id} thread={id.toLowerCase()} />;
}
