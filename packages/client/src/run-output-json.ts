import type { PromptRun } from "@promptrun/contract";

/**
 * A PromptRun whose `outputJson` has the type `T`: the run of a prompt with
 * `output.format: json_schema` (docs/PRODUCT-RULES.md "Runs"). The type is a promise of the
 * caller, not checked; {@link runOutputJson} with a parser checks it.
 */
export type TypedPromptRun<T> = Omit<PromptRun, "outputJson"> & { outputJson: T | null };

/** Turns an unknown value into a `T` or throws: a zod schema (anything with `parse`) or a function. */
export type OutputJsonParser<T> = { parse(value: unknown): T } | ((value: unknown) => T);

/** Why {@link runOutputJson} found no structured output: the run is pending, failed, or has none. */
export class RunOutputError extends Error {
  /** The run's status when it was read. */
  readonly status: PromptRun["status"];

  constructor(status: PromptRun["status"], message: string) {
    super(message);
    this.name = "RunOutputError";
    this.status = status;
  }
}

/**
 * The structured output of a completed run (its `outputJson`), typed as `T`, and checked when a
 * parser is given (e.g. a zod schema: `runOutputJson(run, Contact)`). Throws a
 * {@link RunOutputError} when the run is still pending, has failed (its error in the message),
 * or completed without structured output (its prompt has no `output.format: json_schema`).
 */
export function runOutputJson<T = unknown>(
  run: Pick<PromptRun, "id" | "status" | "error" | "outputJson">,
  parser?: OutputJsonParser<T>,
): T {
  if (run.status === "pending") throw new RunOutputError(run.status, `run ${run.id} is still pending`);
  if (run.status === "failed")
    throw new RunOutputError(run.status, `run ${run.id} failed: ${run.error ?? ""}`);
  if (run.outputJson === null || run.outputJson === undefined) {
    throw new RunOutputError(
      run.status,
      `run ${run.id} has no JSON output (its prompt has no output.format json_schema)`,
    );
  }
  if (!parser) return run.outputJson as T;
  return typeof parser === "function" ? parser(run.outputJson) : parser.parse(run.outputJson);
}
