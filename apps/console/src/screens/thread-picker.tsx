import type { Page, PromptRun } from "@promptrun/contract";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Link, useLocation } from "wouter";
import { rest } from "../api/console-fetch.ts";
import { formatDateTime } from "../components/figures.ts";
import { EmptyState, ErrorNotice } from "../components/notice.tsx";
import { ScrollRegion } from "../components/scroll-region.tsx";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A thread id as the API takes it. */
export const isThreadId = (value: string): boolean => UUID.test(value);

/** The threads of the newest runs, newest first, each once. */
function recentThreads(runs: PromptRun[]) {
  const seen = new Map<string, PromptRun>();
  for (const run of runs) if (!seen.has(run.thread)) seen.set(run.thread, run);
  return [...seen.values()];
}

/** `/console/threads`: open a thread by its id, or one of the threads of the latest runs. */
export function ThreadPicker() {
  const [, navigate] = useLocation();
  const [id, setId] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const runs = useQuery({
    queryKey: ["recent-runs-for-threads"],
    queryFn: () => rest<Page<PromptRun>>("/promptruns?limit=100"),
  });
  const open = (event: FormEvent) => {
    event.preventDefault();
    const thread = id.trim();
    if (!UUID.test(thread)) {
      setProblem("A thread id is a UUID, like 0196a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b.");
      return;
    }
    navigate(`/threads/${thread.toLowerCase()}`);
  };
  const threads = recentThreads(runs.data?.items ?? []);
  return (
    <section aria-labelledby="screen-title" className="thread-picker">
      <h1 id="screen-title">Threads</h1>
      <form className="panel thread-open-form" onSubmit={open}>
        <label htmlFor="thread-id">Thread id</label>
        <div className="inline-row">
          <input
            id="thread-id"
            value={id}
            spellCheck={false}
            placeholder="UUID of a thread"
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? "thread-id-problem" : undefined}
            onChange={(event) => {
              setId(event.target.value);
              setProblem(null);
            }}
          />
          <button type="submit">Open thread</button>
        </div>
        {problem ? (
          <p id="thread-id-problem" className="field-error" role="alert">
            {problem}
          </p>
        ) : null}
      </form>
      <h2>Threads of the latest runs</h2>
      {runs.isError ? <ErrorNotice error={runs.error} /> : null}
      {runs.isPending ? <p className="loading">Loading…</p> : null}
      {runs.isSuccess && threads.length === 0 ? (
        <EmptyState title="No threads yet">
          Every run belongs to a thread. Start a run from the <Link href="/playground">Playground</Link>, then
          come back to follow its thread.
        </EmptyState>
      ) : null}
      {threads.length > 0 ? (
        <ScrollRegion label="Recent threads">
          <table>
            <caption className="visually-hidden">Threads of the latest runs</caption>
            <thead>
              <tr>
                <th scope="col">Thread</th>
                <th scope="col">Latest run</th>
                <th scope="col">Prompt</th>
                <th scope="col">Channel</th>
              </tr>
            </thead>
            <tbody>
              {threads.map((run) => (
                <tr key={run.thread}>
                  <td>
                    <Link href={`/threads/${run.thread}`}>
                      <code>{run.thread}</code>
                    </Link>
                  </td>
                  <td>{formatDateTime(run.createdAt)}</td>
                  <td>
                    <code>
                      {run.prompt.slug}@v{run.prompt.version}
                    </code>
                  </td>
                  <td>{run.channel}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      ) : null}
    </section>
  );
}
