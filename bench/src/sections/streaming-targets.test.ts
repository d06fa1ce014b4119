import { expect, test } from "bun:test";
import {
  firstTokenScalingTarget,
  formatRatio,
  relayCpuTargets,
  relayedTokensScalingTarget,
} from "./streaming-targets.ts";

test("the relay CPU targets compare set-up at 2 × and per token at 1.5 × the bare relay", () => {
  const [setup, perToken] = relayCpuTargets(
    { perStreamMs: 0.4, perTokenUs: 15 },
    { perStreamMs: 0.2, perTokenUs: 10 },
  );
  expect(setup!.met).toBe(true);
  expect(setup!.measured).toBe("0.40 ms vs 0.20 ms (×2.00)");
  expect(perToken!.met).toBe(true);
  const [overSetup, overToken] = relayCpuTargets(
    { perStreamMs: 0.41, perTokenUs: 15.1 },
    { perStreamMs: 0.2, perTokenUs: 10 },
  );
  expect(overSetup!.met).toBe(false);
  expect(overToken!.met).toBe(false);
});

test("the first-token target holds at up to 4 × the one-stream figure", () => {
  expect(firstTokenScalingTarget(2, 8).met).toBe(true);
  expect(firstTokenScalingTarget(2, 8.1).met).toBe(false);
  expect(firstTokenScalingTarget(2, 8.1).measured).toBe("+8.10 ms vs +2.00 ms (×4.05)");
  // A one-stream figure at or under the upstream's gives no ratio, and no pass unless 100 streams add nothing either.
  expect(firstTokenScalingTarget(-0.2, 5).met).toBe(false);
  expect(formatRatio(5, -0.2)).toBe("n/a");
});

test("relayed tokens/s reads as not met while the server has one thread", () => {
  const check = relayedTokensScalingTarget(19_876.4);
  expect(check.met).toBe(false);
  expect(check.measured).toBe("one thread only (no multi-core mode); 19,876 tokens/s at 100 streams");
});
