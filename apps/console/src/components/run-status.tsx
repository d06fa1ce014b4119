import type { Cost, PromptRun } from "@promptrun/contract";
import { formatUsd, isUnpriced } from "./figures.ts";

/** A run's status, and its phase while pending (`pending · requires_action`). */
export function RunStatusBadge({ run }: { run: Pick<PromptRun, "status" | "phase"> }) {
  const text = run.status === "pending" && run.phase ? `${run.status} · ${run.phase}` : run.status;
  return <span className={`badge badge-${run.status}`}>{text}</span>;
}

/** A cost in dollars, flagged when the model has no known price (then the 0 is unknown, not free). */
export function CostAmount({ cost }: { cost: Cost | null }) {
  if (!cost) return <span className="muted">—</span>;
  return (
    <span className="cost">
      {formatUsd(cost.total)}
      {isUnpriced(cost) ? <UnpricedFlag /> : null}
    </span>
  );
}

export function UnpricedFlag() {
  return (
    <span
      className="badge badge-unpriced"
      title="The model has no known price: this cost is unknown, not zero."
    >
      unpriced
    </span>
  );
}
