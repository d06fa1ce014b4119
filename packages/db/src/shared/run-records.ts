import type { RequiredAction, RunRetrieval } from "@promptrun/contract";
import type { RunPause, RunRecord, RunResumption, RunStepRecord } from "@promptrun/core";

/**
 * A runs row as both stores select it: a RunRecord whose pause is still its three columns
 * (docs/ARCHITECTURE.md "Run storage").
 */
export interface StoredRunRow extends Omit<RunRecord, "pause" | "workflowRun"> {
  requiredAction: RequiredAction | null;
  pausedStep: number | null;
  pauseExpiresAt: Date | null;
  /** The workflow run (and its step) this run is a step of; null for an ordinary run. */
  workflowRunId: string | null;
  workflowStep: string | null;
}

/**
 * The run's link to its workflow run, from its two columns: `{workflowRun}` for a step run, and
 * nothing for an ordinary run (the port's "absent"), so its record equals the one it was created from.
 */
const workflowRunOf = (row: {
  workflowRunId: string | null;
  workflowStep: string | null;
}): Pick<RunRecord, "workflowRun"> =>
  row.workflowRunId === null || row.workflowStep === null
    ? {}
    : { workflowRun: { id: row.workflowRunId, step: row.workflowStep } };

/** The row as the port's RunRecord: a non-null paused_step is a pause; the two workflow columns one link. */
export const toRunRecord = ({
  requiredAction,
  pausedStep,
  pauseExpiresAt,
  workflowRunId,
  workflowStep,
  ...record
}: StoredRunRow): RunRecord => ({
  ...record,
  ...workflowRunOf({ workflowRunId, workflowStep }),
  pause:
    pausedStep === null || requiredAction === null || pauseExpiresAt === null
      ? null
      : { step: pausedStep, requiredAction, expiresAt: pauseExpiresAt },
});

/** The pause columns of a run that is not paused (an end or a resume clears them). */
export const NOT_PAUSED = { requiredAction: null, pausedStep: null, pauseExpiresAt: null } as const;

/** What pausing writes: the steps, the pause, and the lease let go (a paused run holds no slot). */
export const pausedRunChanges = (paused: {
  steps: RunStepRecord[];
  pause: RunPause;
  retrieval?: RunRetrieval[] | undefined;
}) => ({
  steps: paused.steps,
  // Absent keeps what is stored (drizzle skips an undefined value).
  ...(paused.retrieval === undefined ? {} : { retrieval: paused.retrieval }),
  requiredAction: paused.pause.requiredAction,
  pausedStep: paused.pause.step,
  pauseExpiresAt: paused.pause.expiresAt,
  leaseOwner: null,
  leaseUntil: null,
});

/** What resuming writes: the steps with the caller's outputs, and the pause cleared. */
export const resumedRunChanges = (resumption: RunResumption) => ({
  steps: resumption.steps,
  ...NOT_PAUSED,
});
