/**
 * Why an attempt's abort signal fired; carried as the signal's reason. `discard`: the run's insert
 * did not commit (it started early, see RunEngine.enqueue), so nothing of it may remain.
 */
export type InterruptionKind = "cancel" | "stop" | "idle" | "timeout" | "discard";

export class RunInterruption extends Error {
  constructor(readonly kind: InterruptionKind) {
    super(`run interrupted: ${kind}`);
    this.name = "RunInterruption";
  }

  static of(signal: AbortSignal): RunInterruption | null {
    return signal.aborted && signal.reason instanceof RunInterruption ? signal.reason : null;
  }
}
