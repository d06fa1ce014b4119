import type { PromptRun, ThreadMemoryMessage, ThreadMessagesPage } from "@promptrun/contract";
import { useQuery } from "@tanstack/react-query";
import { Link } from "wouter";
import { rest } from "../api/console-fetch.ts";
import { ErrorNotice } from "../components/notice.tsx";
import { ThreadMessageView } from "../components/thread-message.tsx";

/** Pages of 200 read at most to find a run's messages in its channel (40,000 messages). */
const MAX_PAGES = 200;

/**
 * A run's messages as its thread keeps them: the API has no endpoint for a run's rendered
 * messages, so they are read from the channel's memory (oldest first) and those the run wrote
 * kept; the reading stops at the first message after them.
 */
async function runMessages(run: PromptRun): Promise<ThreadMemoryMessage[]> {
  const found: ThreadMemoryMessage[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const query = new URLSearchParams({ channel: run.channel, limit: "200" });
    if (cursor) query.set("cursor", cursor);
    const result: ThreadMessagesPage = await rest(`/threads/${run.thread}/messages?${query}`);
    for (const message of result.items) {
      if (message.runId === run.id) found.push(message);
      else if (found.length > 0) return found;
    }
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return found;
}

/** The exchange a completed run added to its thread: the rendered user messages, tool steps, the answer. */
export function RunExchange({ run }: { run: PromptRun }) {
  const completed = run.status === "completed";
  const messages = useQuery({
    queryKey: ["run-exchange", run.id],
    queryFn: () => runMessages(run),
    enabled: completed,
  });
  if (!completed) {
    return (
      <p className="muted">
        {run.status === "pending"
          ? "The run's messages are written to its thread when it completes."
          : "A failed run writes nothing to its thread, so its rendered messages are not kept."}
      </p>
    );
  }
  if (messages.isError) return <ErrorNotice error={messages.error} />;
  if (messages.isPending) return <p className="loading">Loading the run's messages…</p>;
  return (
    <>
      <p className="muted">
        As kept in the thread's memory (channel <code>{run.channel}</code>); the prompt's system messages are
        not kept there.{" "}
        <Link href={`/threads/${run.thread}?channel=${encodeURIComponent(run.channel)}`}>
          Open the thread
        </Link>
      </p>
      {messages.data.length === 0 ? (
        <p className="muted">No message of this run is in its thread.</p>
      ) : (
        <ol className="messages">
          {messages.data.map((message, index) => (
            <ThreadMessageView key={index} message={message} />
          ))}
        </ol>
      )}
    </>
  );
}
