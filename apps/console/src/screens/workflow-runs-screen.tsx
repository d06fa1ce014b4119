import type { Page, WorkflowRun, WorkflowRunStatus } from "@promptrun/contract";
import { keepPreviousData, useInfiniteQuery } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { Link, useSearchParams } from "wouter";
import { useWorkflowClient } from "../api/workflow-api.ts";
import {
  formatCount,
  formatDateTime,
  formatDuration,
  runDurationMs,
  shortId,
} from "../components/figures.ts";
import { EmptyState, ErrorNotice } from "../components/notice.tsx";
import { CostAmount, RunStatusBadge } from "../components/run-status.tsx";
import { ScrollRegion } from "../components/scroll-region.tsx";
import "./runs.css";
import "./workflows.css";

/** While a listed workflow run is pending, the list is read again this often. */
const LIVE_REFRESH_MS = 2_000;
const PAGE_SIZE = 50;
const STATUSES: WorkflowRunStatus[] = ["pending", "completed", "failed"];

interface Filters {
  status?: WorkflowRunStatus;
  workflow?: string;
}

function filtersOf(search: URLSearchParams): Filters {
  const status = search.get("status") as WorkflowRunStatus | null;
  const workflow = search.get("workflow")?.trim();
  return {
    ...(status && STATUSES.includes(status) ? { status } : {}),
    ...(workflow ? { workflow } : {}),
  };
}

const anyPending = (pages: Page<WorkflowRun>[] | undefined): boolean =>
  (pages ?? []).some((page) => page.items.some((run) => run.status === "pending"));

function useWorkflowRunPages(filters: Filters) {
  const client = useWorkflowClient();
  return useInfiniteQuery({
    queryKey: ["workflowRuns", filters],
    queryFn: ({ pageParam }) =>
      client.workflowRun.list.query({ ...filters, limit: PAGE_SIZE, cursor: pageParam }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    placeholderData: keepPreviousData,
    refetchInterval: (state) => (anyPending(state.state.data?.pages) ? LIVE_REFRESH_MS : false),
  });
}

function FilterForm({ filters, onChange }: { filters: Filters; onChange(filters: Filters): void }) {
  const [workflow, setWorkflow] = useState(filters.workflow ?? "");
  // The URL is the truth: follow it when it changes (back button, a shared link, "Clear").
  useEffect(() => setWorkflow(filters.workflow ?? ""), [filters.workflow]);
  const apply = (event: FormEvent) => {
    event.preventDefault();
    onChange({ ...filters, workflow: workflow.trim() || undefined });
  };
  return (
    <form className="runs-filters panel" aria-label="Filter workflow runs" onSubmit={apply}>
      <div className="filter">
        <label htmlFor="filter-status">Status</label>
        <select
          id="filter-status"
          value={filters.status ?? ""}
          onChange={(event) =>
            onChange({
              ...filters,
              status: (event.target.value || undefined) as WorkflowRunStatus | undefined,
            })
          }
        >
          <option value="">Any status</option>
          {STATUSES.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </div>
      <div className="filter">
        <label htmlFor="filter-workflow">Workflow</label>
        <input
          id="filter-workflow"
          value={workflow}
          placeholder="slug of a workflow"
          spellCheck={false}
          onChange={(event) => setWorkflow(event.target.value)}
        />
      </div>
      <div className="filter-actions">
        <button type="submit">Apply</button>
        <button type="button" className="ghost" onClick={() => onChange({})}>
          Clear filters
        </button>
      </div>
    </form>
  );
}

/** `2 of 3 done`: steps that ended (completed, skipped, failed or cancelled) of all. */
function stepProgress(run: WorkflowRun): string {
  const ended = run.steps.filter((step) => step.status !== "pending" && step.status !== "running").length;
  return `${ended} of ${run.steps.length} ended`;
}

function WorkflowRunsTable({ runs }: { runs: WorkflowRun[] }) {
  return (
    <ScrollRegion label="Workflow runs list">
      <table className="runs-table">
        <caption className="visually-hidden">Workflow runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col">Steps</th>
            <th scope="col">Duration</th>
            <th scope="col">Tokens</th>
            <th scope="col">Cost</th>
            <th scope="col">Thread</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => {
            const ms = runDurationMs(run);
            return (
              <tr key={run.id} data-workflow-run-id={run.id}>
                <td>
                  <Link
                    href={`/workflow-runs/${run.id}`}
                    aria-label={`Workflow run ${shortId(run.id)}, created ${formatDateTime(run.createdAt)}`}
                  >
                    {formatDateTime(run.createdAt)}
                  </Link>
                </td>
                <td>
                  <code>
                    {run.workflow.slug}@v{run.workflow.version}
                  </code>
                </td>
                <td>
                  <RunStatusBadge run={run} />
                </td>
                <td>{stepProgress(run)}</td>
                <td>{ms === null ? <span className="muted">—</span> : formatDuration(ms)}</td>
                <td className="number">
                  {run.tokenUsage ? formatCount(run.tokenUsage.total) : <span className="muted">—</span>}
                </td>
                <td className="number">
                  <CostAmount cost={run.cost} />
                </td>
                <td>
                  <Link href={`/threads/${run.thread}`} title={`Thread ${run.thread}`}>
                    {shortId(run.thread)}
                  </Link>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function NoWorkflowRuns({ filtered }: { filtered: boolean }) {
  return (
    <EmptyState title={filtered ? "No workflow run matches these filters" : "No workflow runs yet"}>
      {filtered ? (
        <>Widen the filters or clear them to see more workflow runs.</>
      ) : (
        <>
          Push a workflow (<code>workflows push</code> or <code>POST /api/v1/workflows</code>) and start a run
          with <code>POST /api/v1/workflows/&#123;slug&#125;/&#123;version&#125;/runs</code>.
        </>
      )}
    </EmptyState>
  );
}

/** Workflow runs (`/console/workflow-runs`): `workflowRun.list`, newest first, keyset-paged, live while pending. */
export function WorkflowRunsScreen() {
  const [search, setSearch] = useSearchParams();
  const filters = filtersOf(search);
  const runs = useWorkflowRunPages(filters);
  const items = runs.data?.pages.flatMap((page) => page.items) ?? [];
  const change = (next: Filters) =>
    setSearch(
      new URLSearchParams(
        Object.entries(next).filter((entry): entry is [string, string] => Boolean(entry[1])),
      ),
    );
  return (
    <section aria-labelledby="screen-title" className="runs-screen">
      <h1 id="screen-title">Workflow runs</h1>
      <FilterForm filters={filters} onChange={change} />
      {runs.isError ? <ErrorNotice error={runs.error} /> : null}
      {runs.isPending ? <p className="loading">Loading workflow runs…</p> : null}
      {runs.isSuccess && items.length === 0 ? (
        <NoWorkflowRuns filtered={Object.keys(filters).length > 0} />
      ) : null}
      {items.length > 0 ? (
        <>
          <p className="list-status" aria-live="polite">
            {items.length} workflow run{items.length === 1 ? "" : "s"} shown
            {anyPending(runs.data?.pages) ? " · pending runs refresh every 2 s" : ""}
          </p>
          <WorkflowRunsTable runs={items} />
          {runs.hasNextPage ? (
            <button
              type="button"
              className="load-more"
              disabled={runs.isFetchingNextPage}
              onClick={() => runs.fetchNextPage()}
            >
              {runs.isFetchingNextPage ? "Loading…" : "Load more"}
            </button>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
