export interface SampleSummary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Exact nearest-rank percentiles of a small sample (NaN fields when empty). */
export function summarize(samples: readonly number[]): SampleSummary {
  if (samples.length === 0)
    return { count: 0, p50: Number.NaN, p99: Number.NaN, mean: Number.NaN, max: Number.NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return {
    count: sorted.length,
    p50: at(50),
    p99: at(99),
    mean: sorted.reduce((total, value) => total + value, 0) / sorted.length,
    max: sorted[sorted.length - 1]!,
  };
}
