/** Why an attempt's abort signal fired; carried as the signal's reason. */
export type InterruptionKind = "cancel" | "stop" | "idle" | "timeout" | "output_limit";

export class RunInterruption extends Error {
  constructor(readonly kind: InterruptionKind) {
    super(`run interrupted: ${kind}`);
    this.name = "RunInterruption";
  }

  static of(signal: AbortSignal): RunInterruption | null {
    return signal.aborted && signal.reason instanceof RunInterruption ? signal.reason : null;
  }
}
