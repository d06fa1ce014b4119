import type { PromptRun, RequiredAction } from "@promptrun/contract";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { Link, useParams } from "wouter";
import { rest } from "../api/console-fetch.ts";
import { formatDateTime, formatDuration, runDurationMs, shortId } from "../components/figures.ts";
import { JsonView } from "../components/json-view.tsx";
import { ErrorNotice } from "../components/notice.tsx";
import { RunStatusBadge } from "../components/run-status.tsx";
import { CostSplit, UsageFigures } from "./run-cost.tsx";
import { RunSentMessages } from "./run-messages.tsx";
import { RunSources } from "./run-sources.tsx";
import { RunSteps } from "./run-steps.tsx";
import { RunWebhookDeliveries } from "./run-webhook-deliveries.tsx";
import "./runs.css";

/** A pending run is read again this often, so its phase, steps and output appear as they happen. */
const PENDING_REFRESH_MS = 1_000;

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className="panel">
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function RunFacts({ run }: { run: PromptRun }) {
  const duration = runDurationMs(run);
  return (
    <dl className="facts">
      <Fact label="Prompt">
        <Link href={`/prompts/${run.prompt.slug}`}>{run.prompt.slug}</Link> v{run.prompt.version}
      </Fact>
      <Fact label="Environment">{run.environment}</Fact>
      <Fact label="Thread">
        <Link href={`/threads/${run.thread}?channel=${encodeURIComponent(run.channel)}`}>
          {shortId(run.thread)}
        </Link>{" "}
        <span className="muted">· {run.channel}</span>
      </Fact>
      {run.workflowRun ? (
        <Fact label="Workflow run">
          <Link href={`/workflow-runs/${run.workflowRun.id}`}>{shortId(run.workflowRun.id)}</Link>{" "}
          <span className="muted">· step {run.workflowRun.step}</span>
        </Fact>
      ) : null}
      <Fact label="Priority">{run.priority}</Fact>
      <Fact label="Created">{formatDateTime(run.createdAt)}</Fact>
      <Fact label="Started">{run.startedAt ? formatDateTime(run.startedAt) : "—"}</Fact>
      <Fact label="Finished">{run.finishedAt ? formatDateTime(run.finishedAt) : "—"}</Fact>
      <Fact label="Duration">{duration === null ? "—" : formatDuration(duration)}</Fact>
      <Fact label="Attempts">{run.attempts}</Fact>
      <Fact label="Finish reason">{run.finishReason ?? "—"}</Fact>
      <Fact label="Memory">
        {run.memory ? `${run.memory.messages} history messages, ${run.memory.dropped} left out` : "—"}
      </Fact>
    </dl>
  );
}

function RequiredActionView({ action }: { action: RequiredAction }) {
  return (
    <Section id="required-action" title="Waiting for tool outputs">
      <p>
        The run is paused until the caller submits the outputs of these tool calls (
        <code>POST /api/v1/promptruns/&#123;id&#125;/tool-outputs</code>) before{" "}
        <time dateTime={action.expiresAt}>{formatDateTime(action.expiresAt)}</time>; after that it fails.
      </p>
      <ul className="tool-exchanges">
        {action.toolCalls.map((call) => (
          <li key={call.id} className="tool-exchange">
            <p>
              <code>{call.name}</code> <span className="muted">{call.id}</span>
            </p>
            <JsonView value={call.arguments} />
          </li>
        ))}
      </ul>
    </Section>
  );
}

function RunOutput({ run }: { run: PromptRun }) {
  if (run.status === "pending") return <p className="muted">No output yet: the run is still pending.</p>;
  if (run.outputJson !== null && run.outputJson !== undefined) {
    return <JsonView value={run.outputJson} />;
  }
  if (run.output === null) return <p className="muted">No output.</p>;
  return <p className="run-output">{run.output}</p>;
}

function RunView({ run }: { run: PromptRun }) {
  return (
    <section aria-labelledby="screen-title" className="run-detail">
      <p className="breadcrumb">
        <Link href="/runs">Runs</Link> / <code>{run.id}</code>
      </p>
      <h1 id="screen-title">
        Run {shortId(run.id)} <RunStatusBadge run={run} />
      </h1>
      <RunFacts run={run} />
      {run.error ? (
        <div className="notice notice-error run-error">
          <strong>Error:</strong> {run.error}
        </div>
      ) : null}
      {run.requiredAction ? <RequiredActionView action={run.requiredAction} /> : null}
      <Section id="run-output" title="Output">
        <RunOutput run={run} />
      </Section>
      {run.retrieval.length > 0 ? (
        <Section id="run-sources" title="Sources">
          <RunSources run={run} />
        </Section>
      ) : null}
      <Section id="run-messages" title="Messages">
        <RunSentMessages run={run} />
      </Section>
      <Section id="run-steps" title="Steps">
        <RunSteps steps={run.steps} />
      </Section>
      <Section id="run-usage" title="Usage and cost">
        {run.tokenUsage ? <UsageFigures usage={run.tokenUsage} /> : <p className="muted">No usage yet.</p>}
        {run.cost ? (
          <CostSplit cost={run.cost} caption="Cost of the run" />
        ) : (
          <p className="muted">No cost yet.</p>
        )}
      </Section>
      {Object.keys(run.metadata).length > 0 ? (
        <Section id="run-metadata" title="Metadata">
          <JsonView value={run.metadata} />
        </Section>
      ) : null}
      <Section id="run-webhooks" title="Webhook deliveries">
        <RunWebhookDeliveries run={run} />
      </Section>
    </section>
  );
}

/** Run detail (`/console/runs/:id`): what the run did, step by step, what it cost, and where it was delivered. */
export function RunDetailScreen() {
  const { id = "" } = useParams<{ id: string }>();
  const run = useQuery({
    queryKey: ["run", id],
    queryFn: () => rest<PromptRun>(`/promptruns/${encodeURIComponent(id)}`),
    refetchInterval: (query) => (query.state.data?.status === "pending" ? PENDING_REFRESH_MS : false),
  });
  if (run.isPending) return <p className="loading">Loading the run…</p>;
  if (run.isError) {
    return (
      <section aria-labelledby="screen-title">
        <h1 id="screen-title">Run {shortId(id)}</h1>
        <ErrorNotice error={run.error} />
        <p>
          <Link href="/runs">Back to the runs</Link>
        </p>
      </section>
    );
  }
  return <RunView run={run.data} />;
}
