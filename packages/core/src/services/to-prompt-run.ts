import type { PromptRun, RunPhase, RunStep } from "@promptrun/contract";
import type { RunRecord, RunStepRecord } from "../ports.ts";

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/**
 * A pending run is queued until an attempt starts it, then running, and requires action while it
 * waits for the caller's tool outputs (docs/PRODUCT-RULES.md "Runs").
 */
const phaseOf = (record: RunRecord): RunPhase =>
  record.pause ? "requires_action" : record.startedAt ? "running" : "queued";

/** A stored step as the API shows it: without the run.token count the engine keeps for itself. */
const toRunStep = ({ tokens: _tokens, attempts: _attempts, ...step }: RunStepRecord): RunStep => step;

/**
 * RunRecord → the contract's PromptRun, enforcing the run state rules (docs/PRODUCT-RULES.md "Runs") whatever the record
 * holds: pending → finishedAt, output, tokenUsage and cost null; failed → output and tokenUsage
 * null and an error message; completed → error null; requiredAction only while pending.
 * `prompt.id` is the version id (it pins the exact content that ran).
 */
export function toPromptRun(record: RunRecord): PromptRun {
  const pending = record.status === "pending";
  const completed = record.status === "completed";
  return {
    id: record.id,
    status: record.status,
    createdAt: record.createdAt.toISOString(),
    finishedAt: pending ? null : iso(record.finishedAt),
    output: completed ? record.output : null,
    error: record.status === "failed" ? (record.error ?? "run failed") : null,
    tokenUsage: completed ? record.tokenUsage : null,
    cost: pending ? null : record.cost,
    thread: record.threadId,
    channel: record.channel,
    prompt: { slug: record.promptSlug, version: record.promptVersion, id: record.promptVersionId },
    priority: record.priority,
    environment: record.environment,
    metadata: record.metadata,
    startedAt: iso(record.startedAt),
    attempts: record.attempts,
    outputJson: completed ? (record.outputJson ?? null) : null,
    finishReason: pending ? null : record.finishReason,
    phase: pending ? phaseOf(record) : null,
    requiredAction: pending ? (record.pause?.requiredAction ?? null) : null,
    steps: record.steps.map(toRunStep),
    retrieval: record.retrieval,
    citations: record.citations,
    workflowRun: record.workflowRun ?? null,
    memory: record.memoryWindow,
  };
}
