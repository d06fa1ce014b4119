import { ApiError, type TypedPromptRun } from "@promptrun/client";
import type { PromptRun } from "@promptrun/contract";
import { type UseQueryResult, useQuery } from "@tanstack/react-query";
import { usePromptrunBackend } from "./promptrun-provider.tsx";
import { runQueryKey } from "./run-query-key.ts";

/** Options of {@link useRun}. */
export interface UseRunOptions {
  /** Reads the run (default: the backend's run route). */
  getRun?: (id: string, options: { signal: AbortSignal }) => Promise<PromptRun>;
  /** Poll interval while the run is pending, in ms (default 1000). */
  intervalMs?: number;
  enabled?: boolean;
}

/**
 * Reads a run and polls it while it is pending; polling stops once it is completed or failed.
 * A `useThreadStream` on the same thread refreshes it the moment it ends or pauses. A run paused
 * for client tool outputs is pending with `phase: "requires_action"` and its `requiredAction`.
 * The run carries `outputJson` (a prompt with an output schema), `finishReason`, `phase` and
 * `memory`; `T` types `outputJson` without checking it (`runOutputJson` of @promptrun/client checks).
 */
export function useRun<T = unknown>(
  id: string | null | undefined,
  options: UseRunOptions = {},
): UseQueryResult<TypedPromptRun<T>, Error> {
  const backend = usePromptrunBackend();
  const intervalMs = options.intervalMs ?? 1_000;
  return useQuery({
    queryKey: runQueryKey(id ?? ""),
    queryFn: async ({ signal }) =>
      (await (options.getRun
        ? options.getRun(id!, { signal })
        : backend.getRun(id!, { signal }))) as TypedPromptRun<T>,
    enabled: Boolean(id) && (options.enabled ?? true),
    refetchInterval: (query) => (query.state.data?.status === "pending" ? intervalMs : false),
    // Retrying a 404 or 401 cannot help; network errors, 429 and 5xx can.
    retry: (failures, error) => failures < 3 && (!ApiError.isInstance(error) || error.isRetryable),
  });
}
