import type { RunListFilter, RunRecord, UsageQuery, UsageRow } from "../../ports.ts";

const metadataHas = (metadata: RunRecord["metadata"], key: string, value: string): boolean => {
  if (!Object.hasOwn(metadata, key)) return false;
  const held: unknown = metadata[key];
  return held === value || (Array.isArray(held) && held.includes(value));
};

const phaseMatches = (run: RunRecord, phase: NonNullable<RunListFilter["phase"]>): boolean => {
  if (run.status !== "pending") return false;
  if (phase === "requires_action") return run.pause !== null;
  if (run.pause !== null) return false;
  return phase === "queued" ? run.startedAt === null : run.startedAt !== null;
};

/** The SQL stores' runListCondition (db/src/shared/run-rules.ts), on a record. */
export const matchesRunFilter = (run: RunRecord, filter: RunListFilter): boolean =>
  (filter.threadId === undefined || run.threadId === filter.threadId) &&
  (filter.channel === undefined || run.channel === filter.channel) &&
  (filter.slug === undefined || run.promptSlug === filter.slug) &&
  (filter.version === undefined || run.promptVersion === filter.version) &&
  (filter.status === undefined || run.status === filter.status) &&
  (filter.phase === undefined || phaseMatches(run, filter.phase)) &&
  (filter.environment === undefined || run.environment === filter.environment) &&
  (filter.createdAfter === undefined || run.createdAt.getTime() >= filter.createdAfter.getTime()) &&
  (filter.createdBefore === undefined || run.createdAt.getTime() < filter.createdBefore.getTime()) &&
  Object.entries(filter.metadata ?? {}).every(([key, value]) => metadataHas(run.metadata, key, value));

const emptyRow = (key: string): UsageRow => ({
  key,
  runs: 0,
  completed: 0,
  failed: 0,
  tokenUsage: { input: 0, inputCached: 0, output: 0, reasoning: 0, total: 0 },
  cost: { success: 0, retries: 0, total: 0 },
  unpricedRuns: 0,
});

const keyOf = (run: RunRecord, query: UsageQuery, modelOf: (versionId: string) => string | null): string => {
  if (query.groupBy === "day") return run.createdAt.toISOString().slice(0, 10);
  if (query.groupBy === "prompt") return run.promptSlug;
  if (query.groupBy === "environment") return run.environment;
  return modelOf(run.promptVersionId) ?? "";
};

const addRun = (row: UsageRow, run: RunRecord): void => {
  row.runs += 1;
  if (run.status === "completed") row.completed += 1;
  else row.failed += 1;
  for (const field of ["input", "inputCached", "output", "reasoning", "total"] as const) {
    row.tokenUsage[field] += run.tokenUsage?.[field] ?? 0;
  }
  row.cost.success += run.cost?.success.total ?? 0;
  row.cost.retries += run.cost?.retries.total ?? 0;
  row.cost.total += run.cost?.total ?? 0;
  if (!run.cost || run.cost.success.priced === false || run.cost.retries.priced === false)
    row.unpricedRuns += 1;
};

/** The SQL stores' usage GROUP BY, over records: ended runs created in [from, to), ordered by key. */
export const usageOf = (
  runs: RunRecord[],
  query: UsageQuery,
  modelOf: (versionId: string) => string | null,
): UsageRow[] => {
  const groups = new Map<string, UsageRow>();
  for (const run of runs) {
    if (run.status === "pending") continue;
    const at = run.createdAt.getTime();
    if (at < query.from.getTime() || at >= query.to.getTime()) continue;
    if (query.environment !== undefined && run.environment !== query.environment) continue;
    if (query.slug !== undefined && run.promptSlug !== query.slug) continue;
    const key = keyOf(run, query, modelOf);
    const row = groups.get(key) ?? emptyRow(key);
    addRun(row, run);
    groups.set(key, row);
  }
  return [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
};
