import type { UsageRow } from "@promptrun/core";

/** One usage group as either dialect's GROUP BY returns it (sums may come back as text or null). */
export interface UsageSqlRow {
  key: string | null;
  runs: number | string;
  completed: number | string | null;
  failed: number | string | null;
  unpriced: number | string | null;
  input: number | string | null;
  input_cached: number | string | null;
  output: number | string | null;
  reasoning: number | string | null;
  total_tokens: number | string | null;
  cost_success: number | string | null;
  cost_retries: number | string | null;
  cost_total: number | string | null;
}

const num = (value: number | string | null): number => (value === null ? 0 : Number(value));

/** Converts a GROUP BY row to the port's UsageRow (tokens are whole numbers; costs in USD). */
export const toUsageRow = (row: UsageSqlRow): UsageRow => ({
  key: row.key ?? "",
  runs: num(row.runs),
  completed: num(row.completed),
  failed: num(row.failed),
  tokenUsage: {
    input: num(row.input),
    inputCached: num(row.input_cached),
    output: num(row.output),
    reasoning: num(row.reasoning),
    total: num(row.total_tokens),
  },
  cost: { success: num(row.cost_success), retries: num(row.cost_retries), total: num(row.cost_total) },
  unpricedRuns: num(row.unpriced),
});
