import type { Page, PromptRun } from "@promptrun/contract";
import { keepPreviousData, useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "wouter";
import { rest } from "../api/console-fetch.ts";
import { useTRPC } from "../api/trpc.ts";
import { EmptyState, ErrorNotice } from "../components/notice.tsx";
import { RunsFilterForm } from "./runs-filter-form.tsx";
import { apiQueryOf, filtersFromSearch, type RunFilters, searchOfFilters } from "./runs-filters.ts";
import { RunsTable } from "./runs-table.tsx";
import "./runs.css";

/** While a listed run is pending, the list is read again this often, so runs change state on screen. */
export const LIVE_REFRESH_MS = 2_000;
const PAGE_SIZE = 50;

const anyPending = (pages: Page<PromptRun>[] | undefined): boolean =>
  (pages ?? []).some((page) => page.items.some((run) => run.status === "pending"));

/** Reads the runs of a query page by page (keyset: `nextCursor`), again every 2 s while one is pending. */
function useRunPages(query: URLSearchParams, enabled: boolean) {
  return useInfiniteQuery({
    queryKey: ["runs", query.toString()],
    queryFn: ({ pageParam }) => {
      const page = new URLSearchParams(query);
      page.set("limit", String(PAGE_SIZE));
      if (pageParam) page.set("cursor", pageParam);
      return rest<Page<PromptRun>>(`/promptruns?${page}`);
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    enabled,
    // The rows of the previous filters stay until the new ones arrive (no flash of "Loading").
    placeholderData: keepPreviousData,
    refetchInterval: (state) => (anyPending(state.state.data?.pages) ? LIVE_REFRESH_MS : false),
  });
}

function NoRuns({ filtered }: { filtered: boolean }) {
  return (
    <EmptyState title={filtered ? "No run matches these filters" : "No runs yet"}>
      {filtered ? (
        <>Widen the filters or clear them to see more runs.</>
      ) : (
        <>
          Start one from the <Link href="/playground">Playground</Link>, or create one with{" "}
          <code>POST /api/v1/prompts/&#123;slug&#125;/&#123;version&#125;/runs</code>.
        </>
      )}
    </EmptyState>
  );
}

function RunsList({
  query,
  enabled,
  filtered,
}: {
  query: URLSearchParams;
  enabled: boolean;
  filtered: boolean;
}) {
  const runs = useRunPages(query, enabled);
  const items = runs.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      {runs.isError ? <ErrorNotice error={runs.error} /> : null}
      {runs.isPending && enabled ? <p className="loading">Loading runs…</p> : null}
      {runs.isSuccess && items.length === 0 ? <NoRuns filtered={filtered} /> : null}
      {items.length > 0 ? (
        <>
          <p className="list-status" aria-live="polite">
            {items.length} run{items.length === 1 ? "" : "s"} shown
            {runs.isPlaceholderData ? " · updating…" : ""}
            {anyPending(runs.data?.pages) ? " · pending runs refresh every 2 s" : ""}
          </p>
          <RunsTable runs={items} />
          {runs.hasNextPage ? (
            <button
              type="button"
              className="load-more"
              disabled={runs.isFetchingNextPage}
              onClick={() => runs.fetchNextPage()}
            >
              {runs.isFetchingNextPage ? "Loading…" : "Load more"}
            </button>
          ) : null}
        </>
      ) : null}
    </>
  );
}

/** Runs (`/console/runs`): the filtered list of `GET /api/v1/promptruns`, keyset-paged, live while pending. */
export function RunsScreen() {
  const trpc = useTRPC();
  const [search, setSearch] = useSearchParams();
  const filters = filtersFromSearch(search);
  const summary = useQuery(
    trpc.prompt.summary.queryOptions({ slug: filters.prompt ?? "" }, { enabled: Boolean(filters.prompt) }),
  );
  const tagVersion = filters.tag ? summary.data?.tags[filters.tag] : undefined;
  const tagUnknown = Boolean(filters.tag && summary.isSuccess && tagVersion === undefined);
  const change = (next: RunFilters) => setSearch(searchOfFilters(next));
  return (
    <section aria-labelledby="screen-title" className="runs-screen">
      <h1 id="screen-title">Runs</h1>
      <RunsFilterForm filters={filters} summary={summary.data} onChange={change} />
      {summary.isError ? <ErrorNotice error={summary.error} /> : null}
      {tagUnknown ? (
        <p className="notice notice-error" role="alert">
          The prompt {filters.prompt} has no tag {filters.tag} (the runs list filters by version: a tag is
          resolved to the version it points at now).
        </p>
      ) : null}
      <RunsList
        query={apiQueryOf(filters, tagVersion)}
        enabled={!filters.tag || tagVersion !== undefined}
        filtered={Object.keys(filters).length > 0}
      />
    </section>
  );
}
