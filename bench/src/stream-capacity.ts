/**
 * How many concurrent streams a relay carries with added per-token p99 under a limit: step the
 * number of streams up, each level measured on the upstream directly (the baseline) and on every
 * relay still under the limit; a relay stops at its first level over it (or with failed streams).
 */

/** One batch of streams at one level: per-token p99 (send → receive), failed streams, CPU cores by process. */
export interface LevelReading {
  perTokenP99Ms: number;
  errors: number;
  cores: Record<string, number>;
}

export interface CapacityStep {
  streams: number;
  /** The relay's per-token p99 − the upstream's directly at the same level. */
  addedP99Ms: number;
  reading: LevelReading;
  withinLimit: boolean;
}

export interface CapacitySearch<P extends string> {
  levels: readonly number[];
  limitMs: number;
  /** Levels the baseline was measured at, with its readings. */
  baseline: Array<{ streams: number; reading: LevelReading }>;
  steps: Record<P, CapacityStep[]>;
}

export interface CapacitySearchOptions<P extends string> {
  /** Increasing numbers of concurrent streams; the last one is the cap. */
  levels: readonly number[];
  relays: readonly P[];
  limitMs: number;
  /** Measures `streams` concurrent streams on a relay, or on the upstream directly (null). */
  measure(relay: P | null, streams: number): Promise<LevelReading>;
}

export async function searchCapacity<P extends string>(
  options: CapacitySearchOptions<P>,
): Promise<CapacitySearch<P>> {
  const steps = Object.fromEntries(options.relays.map((relay) => [relay, []])) as unknown as Record<
    P,
    CapacityStep[]
  >;
  const baseline: CapacitySearch<P>["baseline"] = [];
  const stillUnder = (relay: P) => steps[relay].every((step) => step.withinLimit);
  for (const streams of options.levels) {
    const relays = options.relays.filter(stillUnder);
    if (!relays.length) break;
    const direct = await options.measure(null, streams);
    baseline.push({ streams, reading: direct });
    for (const relay of relays) {
      const reading = await options.measure(relay, streams);
      const addedP99Ms = reading.perTokenP99Ms - direct.perTokenP99Ms;
      const withinLimit = reading.errors === 0 && direct.errors === 0 && addedP99Ms < options.limitMs;
      steps[relay].push({ streams, addedP99Ms, reading, withinLimit });
    }
  }
  return { levels: options.levels, limitMs: options.limitMs, baseline, steps };
}

/** The largest level a relay stayed under the limit at; `atCap` when that was the last level. */
export function capacityOf(
  steps: readonly CapacityStep[],
  levels: readonly number[],
): { streams: number | null; atCap: boolean } {
  let streams: number | null = null;
  for (const step of steps) {
    if (!step.withinLimit) break;
    streams = step.streams;
  }
  return { streams, atCap: streams !== null && streams === levels[levels.length - 1] };
}

/** "800", "≥ 1,600 (the cap)" or "< 100 (the first level)". */
export function formatCapacity(
  capacity: { streams: number | null; atCap: boolean },
  levels: readonly number[],
): string {
  const count = (value: number) => value.toLocaleString("en-US");
  if (capacity.streams === null) return `< ${count(levels[0] ?? 0)} (the first level)`;
  return capacity.atCap ? `≥ ${count(capacity.streams)} (the cap)` : count(capacity.streams);
}
