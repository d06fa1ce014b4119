import type { PromptRun, RunMessages } from "@promptrun/contract";
import { useQuery } from "@tanstack/react-query";
import { Link } from "wouter";
import { rest } from "../api/console-fetch.ts";
import { ChatMessageView } from "../components/chat-message.tsx";
import { ErrorNotice } from "../components/notice.tsx";

/** While a run waits, the history it would carry can still grow: read again this often. */
const PENDING_REFRESH_MS = 2_000;

type RunSummary = Pick<PromptRun, "id" | "status" | "thread" | "channel">;

/** What the list shows, in words: where the messages come from and what is left out. */
function MessagesIntro({ run, memory }: { run: RunSummary; memory: RunMessages["memory"] }) {
  const thread = (
    <Link href={`/threads/${run.thread}?channel=${encodeURIComponent(run.channel)}`}>the thread</Link>
  );
  if (memory !== null) {
    return (
      <p className="muted">
        Sent to the model by the run's first call, in order: the prompt's system messages, {memory.messages}{" "}
        history {memory.messages === 1 ? "message" : "messages"} from {thread} (channel{" "}
        <code>{run.channel}</code>
        {memory.dropped > 0 ? `; ${memory.dropped} older left out` : ""}), then the run's own. Env var values
        show as <code>[env:NAME]</code>; later calls of a tool run are under Steps.
      </p>
    );
  }
  if (run.status === "pending") {
    return (
      <p className="muted">
        The run's history is recorded when it ends: these are the messages it would send now, with what{" "}
        {thread} (channel <code>{run.channel}</code>) holds now. Env var values show as{" "}
        <code>[env:NAME]</code>.
      </p>
    );
  }
  return (
    <p className="muted">
      The run ended without recording the history it carried: its prompt's messages are shown without it. Env
      var values show as <code>[env:NAME]</code>.
    </p>
  );
}

/** "from the thread" for the history messages: those right after the system messages. */
function noteOf(answer: RunMessages, index: number): string | undefined {
  if (answer.memory === null) return undefined;
  const start = answer.messages.findIndex((message) => message.role !== "system");
  return start !== -1 && index >= start && index < start + answer.memory.messages
    ? "from the thread"
    : undefined;
}

/**
 * The messages of a run's first model call (GET /api/v1/promptruns/{id}/messages): the prompt's
 * system messages, the thread history it carried, its rendered messages.
 */
export function RunSentMessages({ run }: { run: RunSummary }) {
  const messages = useQuery({
    // The status is part of the key: once the run ends, its recorded history is read afresh.
    queryKey: ["run-messages", run.id, run.status],
    queryFn: () => rest<RunMessages>(`/promptruns/${encodeURIComponent(run.id)}/messages`),
    refetchInterval: run.status === "pending" ? PENDING_REFRESH_MS : false,
  });
  if (messages.isError) return <ErrorNotice error={messages.error} />;
  if (messages.isPending) return <p className="loading">Loading the run's messages…</p>;
  const answer = messages.data;
  return (
    <>
      <MessagesIntro run={run} memory={answer.memory} />
      {answer.messages.length === 0 ? (
        <p className="muted">The prompt rendered no message for these inputs.</p>
      ) : (
        <ol className="messages" aria-label="Messages sent to the model, in order">
          {answer.messages.map((message, index) => (
            <ChatMessageView key={index} message={message} note={noteOf(answer, index)} />
          ))}
        </ol>
      )}
    </>
  );
}
