import type { PromptRun } from "@promptrun/contract";
import { Link } from "wouter";
import {
  formatCount,
  formatDateTime,
  formatDuration,
  runDurationMs,
  shortId,
} from "../components/figures.ts";
import { CostAmount, RunStatusBadge } from "../components/run-status.tsx";
import { ScrollRegion } from "../components/scroll-region.tsx";

function Tokens({ run }: { run: PromptRun }) {
  if (!run.tokenUsage) return <span className="muted">—</span>;
  const { input, output, total } = run.tokenUsage;
  return (
    <span title={`${formatCount(input)} in, ${formatCount(output)} out`}>
      {formatCount(total)}
      <span className="visually-hidden">
        {" "}
        ({formatCount(input)} in, {formatCount(output)} out)
      </span>
    </span>
  );
}

function Duration({ run }: { run: PromptRun }) {
  const ms = runDurationMs(run);
  return ms === null ? <span className="muted">—</span> : <span>{formatDuration(ms)}</span>;
}

/** The runs of one listing, newest first; each row links to the run and to its thread. */
export function RunsTable({ runs }: { runs: PromptRun[] }) {
  return (
    <ScrollRegion label="Runs list">
      <table className="runs-table">
        <caption className="visually-hidden">Runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">Prompt</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Tokens</th>
            <th scope="col">Cost</th>
            <th scope="col">Environment</th>
            <th scope="col">Thread</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.id} data-run-id={run.id}>
              <td>
                <Link
                  href={`/runs/${run.id}`}
                  aria-label={`Run ${shortId(run.id)}, created ${formatDateTime(run.createdAt)}`}
                >
                  {formatDateTime(run.createdAt)}
                </Link>
              </td>
              <td>
                <code>
                  {run.prompt.slug}@v{run.prompt.version}
                </code>
              </td>
              <td>
                <RunStatusBadge run={run} />
              </td>
              <td>
                <Duration run={run} />
              </td>
              <td className="number">
                <Tokens run={run} />
              </td>
              <td className="number">
                <CostAmount cost={run.cost} />
              </td>
              <td>{run.environment}</td>
              <td>
                <Link href={`/threads/${run.thread}`} title={`Thread ${run.thread}`}>
                  {shortId(run.thread)}
                </Link>
                {run.channel !== "default" ? <span className="muted"> · {run.channel}</span> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
