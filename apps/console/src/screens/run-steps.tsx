import type { RunStep, ToolCall, ToolResult } from "@promptrun/contract";
import { formatDuration, formatUsd } from "../components/figures.ts";
import { JsonView } from "../components/json-view.tsx";
import { CostSplit, UsageFigures } from "./run-cost.tsx";

function ToolCallWithResult({ call, result }: { call: ToolCall; result: ToolResult | undefined }) {
  return (
    <li className="tool-exchange">
      <p>
        <span className="part-kind">tool call</span> <code>{call.name}</code>{" "}
        <span className="muted">{call.id}</span>
      </p>
      <JsonView value={call.arguments} />
      {result ? (
        <>
          <p>
            <span className={`part-kind${result.isError ? " is-error" : ""}`}>
              {result.isError ? "tool error" : "result"}
            </span>{" "}
            <span className="muted">executed by the {result.executedBy}</span>
          </p>
          <JsonView value={result.output} />
        </>
      ) : (
        <p className="muted">No result yet.</p>
      )}
    </li>
  );
}

function StepView({ step }: { step: RunStep }) {
  const ms = new Date(step.finishedAt).getTime() - new Date(step.startedAt).getTime();
  const heading = `Step ${step.index + 1}`;
  return (
    <li className="step panel" aria-label={heading}>
      <h3>
        {heading} <span className="muted">· {step.model}</span>
      </h3>
      <dl className="facts">
        <div>
          <dt>Finish reason</dt>
          <dd>{step.finishReason ?? "—"}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{formatDuration(ms)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{formatUsd(step.cost.total)}</dd>
        </div>
      </dl>
      {step.text ? <p className="step-text">{step.text}</p> : <p className="muted">No text in this step.</p>}
      {step.toolCalls.length > 0 ? (
        <ul className="tool-exchanges" aria-label={`Tool calls of step ${step.index + 1}`}>
          {step.toolCalls.map((call) => (
            <ToolCallWithResult
              key={call.id}
              call={call}
              result={step.toolResults.find((result) => result.toolCallId === call.id)}
            />
          ))}
        </ul>
      ) : null}
      <details>
        <summary>Usage and cost of step {step.index + 1}</summary>
        <UsageFigures usage={step.usage} />
        <CostSplit cost={step.cost} caption={`Cost of step ${step.index + 1}`} />
      </details>
    </li>
  );
}

/** The model calls of a run, in order, with their tool calls and results (docs/TOOLS.md). */
export function RunSteps({ steps }: { steps: RunStep[] }) {
  if (steps.length === 0) return <p className="muted">No model call has answered yet.</p>;
  return (
    <ol className="steps">
      {steps.map((step) => (
        <StepView key={step.index} step={step} />
      ))}
    </ol>
  );
}
