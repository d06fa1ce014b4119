import { type ConnectionChange, subscribeToThread } from "@promptrun/client";
import type { StreamEnvelope, StreamTokenResponse } from "@promptrun/contract";
import { useEffect, useReducer, useState } from "react";
import { Link } from "wouter";
import { rest } from "../api/console-fetch.ts";
import { formatClockTime, shortId } from "../components/figures.ts";
import { emptyLiveState, foldLiveEvent, type LiveRun, type LiveState } from "./thread-live-state.ts";

type Connection = { status: "connecting" | "live" | "reconnecting" | "closed"; error?: string };

const connectionText = (connection: Connection): string => {
  switch (connection.status) {
    case "connecting":
      return "Connecting to the thread's stream…";
    case "live":
      return "Live: new events appear as they happen.";
    case "reconnecting":
      return `Reconnecting${connection.error ? ` (${connection.error})` : ""}…`;
    case "closed":
      return `The stream is closed${connection.error ? `: ${connection.error}` : ""}.`;
  }
};

function LiveRunView({ run }: { run: LiveRun }) {
  return (
    <li className="live-run" data-run-id={run.runId}>
      <p className="live-run-head">
        <Link href={`/runs/${run.runId}`}>run {shortId(run.runId)}</Link> <code>{run.label}</code>{" "}
        <span className="muted">· {run.channel}</span>{" "}
        <span className={`badge badge-live-${run.status}`}>{run.status.replace("_", " ")}</span>
      </p>
      <p className="live-run-text" aria-live="off">
        {run.text || <span className="muted">(no text yet)</span>}
      </p>
    </li>
  );
}

/**
 * The live tail of a thread: a stream token minted by `POST /api/v1/threads/{thread}/stream-token`
 * (again when it expires), the events read with `subscribeToThread` of @promptrun/client.
 * `onRunEnded` lets the screen read the thread's messages again.
 */
// long-function: one effect owns the subscription; the rest is its view.
export function ThreadLiveTail({ thread, onRunEnded }: { thread: string; onRunEnded(): void }) {
  const [state, dispatch] = useReducer(
    (current: LiveState, action: { event: StreamEnvelope; at: string } | "clear") =>
      action === "clear" ? emptyLiveState : foldLiveEvent(current, action.event, action.at),
    emptyLiveState,
  );
  const [connection, setConnection] = useState<Connection>({ status: "connecting" });

  useEffect(() => {
    const controller = new AbortController();
    dispatch("clear");
    const onConnectionChange = (change: ConnectionChange) => {
      if (change.status === "reconnecting" || change.status === "closed")
        setConnection({ status: change.status, error: change.error?.message });
      else if (change.status === "connecting") setConnection({ status: "connecting" });
    };
    (async () => {
      const events = subscribeToThread({
        getToken: () =>
          rest<StreamTokenResponse>(`/threads/${encodeURIComponent(thread)}/stream-token`, {
            method: "POST",
          }),
        signal: controller.signal,
        onConnectionChange,
      });
      for await (const event of events) {
        if (event.type === "ready") setConnection({ status: "live" });
        dispatch({ event, at: new Date().toISOString() });
        if (event.type === "run.completed" || event.type === "run.failed" || event.type === "reset")
          onRunEnded();
      }
    })().catch((error: unknown) => {
      if (!controller.signal.aborted)
        setConnection({ status: "closed", error: error instanceof Error ? error.message : String(error) });
    });
    return () => controller.abort();
  }, [thread, onRunEnded]);

  return (
    <section aria-labelledby="live-title" className="panel live-tail">
      <h2 id="live-title">Live</h2>
      <p role="status" className={`connection connection-${connection.status}`}>
        {connectionText(connection)}
      </p>
      {state.runs.length > 0 ? (
        <>
          <h3>Runs under way</h3>
          <ul className="live-runs">
            {state.runs.map((run) => (
              <LiveRunView key={run.runId} run={run} />
            ))}
          </ul>
        </>
      ) : (
        <p className="muted">
          No run has started since this page opened. Start one on this thread (the Playground, or the API with{" "}
          <code>"thread": "{thread}"</code>) and watch it here.
        </p>
      )}
      <h3 id="events-title">Events</h3>
      {state.log.length === 0 ? (
        <p className="muted">No events yet.</p>
      ) : (
        <ol className="event-log" aria-labelledby="events-title">
          {state.log.map((entry) => (
            <li key={entry.key} className={`event event-${entry.type.replace(".", "-")}`}>
              <time dateTime={entry.receivedAt}>{formatClockTime(entry.receivedAt)}</time>{" "}
              <code className="event-type">{entry.type}</code>
              {entry.tokens > 1 ? <span className="muted"> ×{entry.tokens}</span> : null}{" "}
              {entry.runId ? <span className="muted">{shortId(entry.runId)}</span> : null}{" "}
              <span className="event-detail">{entry.detail}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
