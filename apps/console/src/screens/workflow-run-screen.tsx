import type { WorkflowRun, WorkflowRunStep } from "@promptrun/contract";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { Link, useParams } from "wouter";
import { useWorkflowClient, workflowRunKey, workflowVersionKey } from "../api/workflow-api.ts";
import { ConfirmDialog } from "../components/confirm-dialog.tsx";
import {
  formatCount,
  formatDateTime,
  formatDuration,
  runDurationMs,
  shortId,
} from "../components/figures.ts";
import { JsonView } from "../components/json-view.tsx";
import { ErrorNotice } from "../components/notice.tsx";
import { CostAmount, RunStatusBadge } from "../components/run-status.tsx";
import { CostSplit, UsageFigures } from "./run-cost.tsx";
import { STEP_STATUS_MARK, WorkflowGraphView } from "./workflow-graph-view.tsx";
import "./runs.css";
import "./workflows.css";

/** A pending workflow run is read again this often, so its steps change state on screen. */
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

function WorkflowRunFacts({ run }: { run: WorkflowRun }) {
  const duration = runDurationMs(run);
  return (
    <dl className="facts">
      <Fact label="Workflow">
        <code>
          {run.workflow.slug}@v{run.workflow.version}
        </code>
      </Fact>
      <Fact label="Status">{run.status}</Fact>
      <Fact label="Phase">{run.phase ?? "—"}</Fact>
      <Fact label="Duration">{duration === null ? "—" : formatDuration(duration)}</Fact>
      <Fact label="Tokens">
        {run.tokenUsage
          ? `${formatCount(run.tokenUsage.total)} (${formatCount(run.tokenUsage.input)} in, ${formatCount(run.tokenUsage.output)} out)`
          : "—"}
      </Fact>
      <Fact label="Cost">
        <CostAmount cost={run.cost} />
      </Fact>
      <Fact label="Environment">{run.environment}</Fact>
      <Fact label="Thread">
        <Link href={`/threads/${run.thread}`}>{shortId(run.thread)}</Link>
      </Fact>
      <Fact label="Created">{formatDateTime(run.createdAt)}</Fact>
      <Fact label="Finished">{run.finishedAt ? formatDateTime(run.finishedAt) : "—"}</Fact>
    </dl>
  );
}

function CancelButton({ run }: { run: WorkflowRun }) {
  const client = useWorkflowClient();
  const queryClient = useQueryClient();
  const [asking, setAsking] = useState(false);
  const cancel = useMutation({
    mutationFn: () => client.workflowRun.cancel.mutate({ id: run.id }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: workflowRunKey(run.id) }),
  });
  return (
    <div className="workflow-cancel">
      <button type="button" className="danger" disabled={cancel.isPending} onClick={() => setAsking(true)}>
        {cancel.isPending ? "Cancelling…" : "Cancel workflow run"}
      </button>
      {cancel.isError ? <ErrorNotice error={cancel.error} /> : null}
      <ConfirmDialog
        open={asking}
        title={`Cancel workflow run ${shortId(run.id)}?`}
        confirmLabel="Yes, cancel it"
        onConfirm={() => cancel.mutate()}
        onClose={() => setAsking(false)}
      >
        <p>
          Its running steps are cancelled, the steps that have not started never will, and the run ends{" "}
          <code>failed</code> with the error <code>cancelled</code>.
        </p>
      </ConfirmDialog>
    </div>
  );
}

function StepOutput({ step }: { step: WorkflowRunStep }) {
  if (step.outputJson !== null && step.outputJson !== undefined) return <JsonView value={step.outputJson} />;
  if (step.output !== null) return <p className="run-output">{step.output}</p>;
  return null;
}

function StepItem({ step }: { step: WorkflowRunStep }) {
  const ms =
    step.finishedAt && step.startedAt ? Date.parse(step.finishedAt) - Date.parse(step.startedAt) : null;
  return (
    <li className="step panel" aria-label={`Step ${step.id}`} data-step-id={step.id}>
      <h3>
        <code>{step.id}</code> <span className="muted">· {step.kind}</span>{" "}
        <span className={`badge badge-step-${step.status}`}>
          {STEP_STATUS_MARK[step.status]} {step.status}
        </span>
      </h3>
      <dl className="facts">
        <Fact label="Run">
          {step.runId ? <Link href={`/runs/${step.runId}`}>{shortId(step.runId)}</Link> : "—"}
        </Fact>
        <Fact label="Started">{step.startedAt ? formatDateTime(step.startedAt) : "—"}</Fact>
        <Fact label="Duration">{ms === null ? "—" : formatDuration(ms)}</Fact>
      </dl>
      {step.error ? (
        <p className="notice notice-error">
          <strong>Error:</strong> {step.error}
        </p>
      ) : null}
      <StepOutput step={step} />
    </li>
  );
}

function WorkflowOutput({ run }: { run: WorkflowRun }) {
  if (run.status === "pending")
    return <p className="muted">No output yet: the workflow run is still pending.</p>;
  if (run.outputJson !== null && run.outputJson !== undefined) return <JsonView value={run.outputJson} />;
  if (run.output === null) return <p className="muted">No output.</p>;
  return <p className="run-output">{run.output}</p>;
}

function WorkflowRunView({ run }: { run: WorkflowRun }) {
  const client = useWorkflowClient();
  const { slug, version } = run.workflow;
  const definition = useQuery({
    queryKey: workflowVersionKey(slug, version),
    queryFn: () => client.workflow.get.query({ slug, version: String(version) }),
    staleTime: Number.POSITIVE_INFINITY,
  });
  return (
    <section aria-labelledby="screen-title" className="run-detail workflow-run">
      <p className="breadcrumb">
        <Link href="/workflow-runs">Workflow runs</Link> / <code>{run.id}</code>
      </p>
      <h1 id="screen-title">
        Workflow run {shortId(run.id)} <RunStatusBadge run={run} />
      </h1>
      <WorkflowRunFacts run={run} />
      {run.status === "pending" ? <CancelButton run={run} /> : null}
      {run.error ? (
        <div className="notice notice-error run-error">
          <strong>Error:</strong> {run.error}
        </div>
      ) : null}
      <Section id="workflow-graph" title="Graph">
        {definition.isError ? <ErrorNotice error={definition.error} /> : null}
        {definition.isPending ? <p className="muted">Loading the workflow's dependencies…</p> : null}
        <WorkflowGraphView runSteps={run.steps} definition={definition.data?.steps} />
        <p className="muted graph-note">
          Arrows are the dependencies the console reads from the workflow's expressions (for display).
        </p>
      </Section>
      <Section id="workflow-steps" title="Steps">
        <ol className="steps">
          {run.steps.map((step) => (
            <StepItem key={step.id} step={step} />
          ))}
        </ol>
      </Section>
      <Section id="workflow-output" title="Output">
        <WorkflowOutput run={run} />
      </Section>
      <Section id="workflow-usage" title="Usage and cost">
        {run.tokenUsage ? <UsageFigures usage={run.tokenUsage} /> : <p className="muted">No usage yet.</p>}
        {run.cost ? (
          <CostSplit cost={run.cost} caption="Cost of the workflow run (its steps' runs)" />
        ) : (
          <p className="muted">No cost yet.</p>
        )}
      </Section>
      <Section id="workflow-inputs" title="Inputs">
        <JsonView value={run.inputs} />
      </Section>
    </section>
  );
}

/** Workflow run (`/console/workflow-runs/:id`): the graph of its steps, live while pending, and a cancel. */
export function WorkflowRunScreen() {
  const { id = "" } = useParams<{ id: string }>();
  const client = useWorkflowClient();
  const run = useQuery({
    queryKey: workflowRunKey(id),
    queryFn: () => client.workflowRun.get.query({ id }),
    refetchInterval: (query) => (query.state.data?.status === "pending" ? PENDING_REFRESH_MS : false),
  });
  if (run.isPending) return <p className="loading">Loading the workflow run…</p>;
  if (run.isError) {
    return (
      <section aria-labelledby="screen-title">
        <h1 id="screen-title">Workflow run {shortId(id)}</h1>
        <ErrorNotice error={run.error} />
        <p>
          <Link href="/workflow-runs">Back to the workflow runs</Link>
        </p>
      </section>
    );
  }
  return <WorkflowRunView run={run.data} />;
}
