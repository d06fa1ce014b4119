import { type Page, type PromptRun, pageOf, promptRunSchema, type RunListFilters } from "@promptrun/contract";
import { type ClientRequest, queryString } from "./client-request.ts";

/** Filters of `runs.list` (GET /api/v1/promptruns) and the page to read. */
export interface ListRunsOptions extends RunListFilters {
  cursor?: string | null;
  /** 1–200, default 50. */
  limit?: number;
  signal?: AbortSignal;
}

const runPageSchema = pageOf(promptRunSchema);

/** The query of a list: the named filters, and `metadata.<key>` for each metadata filter. */
const listQuery = ({ metadata, signal: _signal, cursor, ...named }: ListRunsOptions): string =>
  queryString({
    ...named,
    cursor: cursor ?? undefined,
    ...Object.fromEntries(Object.entries(metadata ?? {}).map(([key, value]) => [`metadata.${key}`, value])),
  });

/** One page of runs, newest first. */
export const listRuns = (request: ClientRequest, options: ListRunsOptions = {}): Promise<Page<PromptRun>> =>
  request("GET", `/api/v1/promptruns${listQuery(options)}`, runPageSchema, { signal: options.signal });

/** Every page of a list in turn, from `options.cursor` (or the newest run) to the last page. */
export async function* listRunPages(
  request: ClientRequest,
  options: ListRunsOptions = {},
): AsyncGenerator<Page<PromptRun>, void, undefined> {
  let cursor = options.cursor ?? null;
  do {
    const page = await listRuns(request, { ...options, cursor });
    yield page;
    cursor = page.nextCursor;
  } while (cursor !== null);
}
