import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE } from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import type { RunEngine } from "../engine-port.ts";
import { conflict, forbidden, invalid, PromptrunError } from "../errors.ts";
import type { Clock, IdempotencyRecord, RunRecord, Store, TenantRecord } from "../ports.ts";
import type { RequestFingerprint } from "../security/request-fingerprint.ts";
import type { SubmitToolOutputsOptions } from "../services.ts";
import {
  checkOutputsAnswerPause,
  checkToolOutputsBody,
  notWaitingReason,
  stepsWithToolOutputs,
} from "./tool-outputs.ts";

export interface SubmitToolOutputsDependencies {
  store: Pick<Store, "runs">;
  config: Pick<PromptrunConfig, "idempotencyTtlSeconds">;
  clock: Clock;
  engine: Pick<RunEngine, "resume">;
  fingerprint: RequestFingerprint;
  /** The tenant's run by id; not_found for an unknown, malformed or other tenant's id. */
  requireRun(tenantId: string, id: string): Promise<RunRecord>;
  /** An idempotency record met again: the same request replays, another one conflicts. */
  replay(
    record: IdempotencyRecord,
    fingerprinted: unknown,
  ): { id: string; thread: string; replayed: boolean };
}

export type SubmitToolOutputs = (
  tenant: TenantRecord,
  runId: string,
  body: unknown,
  options?: SubmitToolOutputsOptions,
) => Promise<{ id: string; thread: string; replayed: boolean }>;

/**
 * POST /api/v1/promptruns/{id}/tool-outputs (docs/PRODUCT-RULES.md "Tool outputs"), checks in
 * order: subscription (403), the run (404), the body (400), the Idempotency-Key (a replay answers
 * as the first time, whatever the run's state now), the run's state (409: not waiting, or the
 * pause expired), the ids against the pause (400). Then the pause ends in the store — a
 * compare-and-set on the paused step, so of two concurrent submissions one wins and the other
 * gets the 409 — and the engine continues the run.
 */
export function createSubmitToolOutputs(dependencies: SubmitToolOutputsDependencies): SubmitToolOutputs {
  const { store, config, clock, engine, fingerprint, requireRun, replay } = dependencies;

  /** Where a key's request stands: none yet, or answered (replayed, or a conflict). */
  const replayOf = async (
    tenantId: string,
    idempotencyKey: string | undefined,
    notBefore: Date,
    fingerprinted: unknown,
  ) => {
    if (idempotencyKey === undefined) return null;
    const existing = await store.runs.findIdempotency(tenantId, idempotencyKey, notBefore);
    return existing ? replay(existing, fingerprinted) : null;
  };

  return async (tenant, runId, body, options) => {
    // Answering tools makes the run call its model again: it spends, as a new run would.
    if (!tenant.subscriptionActive) throw forbidden("no active subscription");
    const run = await requireRun(tenant.id, runId);
    const request = checkToolOutputsBody(body);
    const idempotencyKey = options?.idempotencyKey;
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey))
      throw invalid(IDEMPOTENCY_KEY_RULE);

    const now = clock.now();
    const notBefore = new Date(now.getTime() - config.idempotencyTtlSeconds * 1000);
    // Keys share create-run's namespace; the operation and the run are part of the fingerprint.
    const fingerprinted = { operation: "tool-outputs", run: run.id, request };
    const replayed = await replayOf(tenant.id, idempotencyKey, notBefore, fingerprinted);
    if (replayed) return replayed;

    const reason = notWaitingReason(run, now);
    if (reason !== null || run.pause === null)
      throw conflict(reason ?? "run is not waiting for tool outputs");
    const pause = run.pause;
    checkOutputsAnswerPause(pause, request);

    const steps = stepsWithToolOutputs(run.steps, pause, request);
    const idempotency: IdempotencyRecord | undefined =
      idempotencyKey === undefined
        ? undefined
        : {
            tenantId: tenant.id,
            key: idempotencyKey,
            requestHash: fingerprint.of(fingerprinted),
            runId: run.id,
            threadId: run.threadId,
            createdAt: now,
          };
    let resumed: boolean;
    try {
      resumed = await store.runs.resume(run.id, { step: pause.step, steps }, idempotency, {
        idempotencyExpiredBefore: notBefore,
      });
    } catch (error) {
      // The same key was taken meanwhile (a concurrent retry): answer as its replay.
      const isTakenKey = PromptrunError.isInstance(error) && error.code === "conflict";
      const winner = isTakenKey ? await replayOf(tenant.id, idempotencyKey, notBefore, fingerprinted) : null;
      if (winner) return winner;
      throw error;
    }
    if (!resumed) {
      // A concurrent retry with this key may have won (replayed, not refused); else another
      // submission, an expiry or a cancel got there first: say where the run is now.
      const winner = await replayOf(tenant.id, idempotencyKey, notBefore, fingerprinted);
      if (winner) return winner;
      const current = await requireRun(tenant.id, run.id);
      throw conflict(
        notWaitingReason(current, clock.now()) ??
          "these tool calls were answered meanwhile by another request",
      );
    }
    engine.resume({ ...run, steps, pause: null });
    return { id: run.id, thread: run.threadId, replayed: false };
  };
}
