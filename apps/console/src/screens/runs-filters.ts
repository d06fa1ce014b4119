/**
 * The runs view's filters as they live in the URL (`/console/runs?status=failed&prompt=greet`), so
 * a filtered view can be shared, and as the query of `GET /api/v1/promptruns`. The API has no tag
 * filter: a tag is resolved to the version it points at now (docs/PRODUCT-RULES.md "Listing runs").
 */
export const RUN_FILTER_NAMES = [
  "status",
  "phase",
  "prompt",
  "version",
  "tag",
  "environment",
  "thread",
  "createdAfter",
  "createdBefore",
] as const;

export type RunFilterName = (typeof RUN_FILTER_NAMES)[number];
export type RunFilters = Partial<Record<RunFilterName, string>>;

/** The filters a URL's query names (empty values dropped, unknown names ignored). */
export function filtersFromSearch(search: URLSearchParams): RunFilters {
  const filters: RunFilters = {};
  for (const name of RUN_FILTER_NAMES) {
    const value = search.get(name)?.trim();
    if (value) filters[name] = value;
  }
  return filters;
}

/** The URL query of some filters, in a stable order. */
export function searchOfFilters(filters: RunFilters): URLSearchParams {
  const search = new URLSearchParams();
  for (const name of RUN_FILTER_NAMES) {
    const value = filters[name];
    if (value) search.set(name, value);
  }
  return search;
}

/**
 * The API query: every filter but `tag`, which becomes `version` (the version the tag points at,
 * `tagVersion`); version and tag need a prompt, so without one they are left out.
 */
export function apiQueryOf(filters: RunFilters, tagVersion: number | undefined): URLSearchParams {
  const { tag, version, prompt, ...rest } = filters;
  const query = searchOfFilters(rest);
  if (prompt) {
    query.set("prompt", prompt);
    const chosen = tag ? tagVersion : version;
    if (chosen !== undefined) query.set("version", String(chosen));
  }
  return query;
}

/** `YYYY-MM-DDTHH:mm` of an `<input type="datetime-local">`, in the reader's time zone. */
export function localInputOf(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The ISO 8601 instant of a datetime-local value (the API wants a zone), or undefined when empty. */
export function isoOfLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
