/** Issue #24's streaming targets (3, 4 and the relayed-tokens half of 2), each against its floor. */
import { formatAddedMs, formatCount, formatMs } from "../format.ts";
import type { StreamCpuSplit } from "../stream-cpu-cost.ts";
import type { TargetCheck } from "./bench-context.ts";

/** "×1.8", or "n/a" when the floor is not a positive figure. */
export const formatRatio = (value: number, floor: number): string =>
  floor > 0 && Number.isFinite(value) ? `×${(value / floor).toFixed(2)}` : "n/a";

/** Target 3: Promptrun's stream set-up and per-token CPU against the bare relay's, measured alike. */
export function relayCpuTargets(promptrun: StreamCpuSplit, bareRelay: StreamCpuSplit): TargetCheck[] {
  return [
    {
      target:
        "stream set-up CPU (token mint, subscribe, create, start, finish) ≤ 2 × the bare relay's per stream",
      measured: `${formatMs(promptrun.perStreamMs)} ms vs ${formatMs(bareRelay.perStreamMs)} ms (${formatRatio(promptrun.perStreamMs, bareRelay.perStreamMs)})`,
      met: promptrun.perStreamMs <= 2 * bareRelay.perStreamMs,
    },
    {
      target: "per-token relay CPU ≤ 1.5 × the bare relay's",
      measured: `${formatMs(promptrun.perTokenUs)} µs vs ${formatMs(bareRelay.perTokenUs)} µs (${formatRatio(promptrun.perTokenUs, bareRelay.perTokenUs)})`,
      met: promptrun.perTokenUs <= 1.5 * bareRelay.perTokenUs,
    },
  ];
}

/** Target 4: added first-token p50 at 100 streams started together ≤ 4 × the one-stream figure. */
export function firstTokenScalingTarget(
  oneStreamAddedMs: number,
  hundredStreamsAddedMs: number,
): TargetCheck {
  return {
    target: "added time to first token at 100 streams started together ≤ 4 × one stream's (p50)",
    measured: `${formatAddedMs(hundredStreamsAddedMs)} ms vs ${formatAddedMs(oneStreamAddedMs)} ms (${formatRatio(hundredStreamsAddedMs, oneStreamAddedMs)})`,
    met: hundredStreamsAddedMs <= 4 * oneStreamAddedMs,
  };
}

/** Target 2, relayed tokens: the server has one thread, so there is no multi-core figure to compare. */
export function relayedTokensScalingTarget(tokensPerSecondAt100: number): TargetCheck {
  return {
    target: "relayed tokens/s ≥ 1.6 × what the same build does on one thread",
    measured: `one thread only (no multi-core mode); ${formatCount(tokensPerSecondAt100)} tokens/s at 100 streams`,
    met: false,
  };
}
