import {
  type Page,
  type PromptFileInput,
  type PromptSummary,
  type PromptVersion,
  type PushedPrompt,
  pageOf,
  promptSummarySchema,
  promptVersionSchema,
  pushedPromptSchema,
} from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { createPromptCache, type PromptCacheEntry, type PromptCacheOptions } from "./prompts-cache.ts";
import type { RestRequester } from "./rest-request.ts";

/** Options of `prompts.list`: a page of `GET /api/v1/prompts`. */
export interface ListPromptsOptions {
  /** Case-insensitive substring of the slug or the latest description. */
  q?: string;
  /** Only prompts having this tag. */
  tag?: string;
  cursor?: string | null;
  /** 1–200, default 50. */
  limit?: number;
  signal?: AbortSignal;
}

/** Options of `prompts.versions`. */
export interface ListPromptVersionsOptions {
  cursor?: string | null;
  limit?: number;
  signal?: AbortSignal;
}

/** Options of `prompts.get`. */
export interface GetPromptOptions {
  /** Version number, tag, `latest` or version id; default `latest`. */
  version?: string | number;
  /** A tag: the same as `version: tag`. Give `version` or `tag`, not both. */
  tag?: string;
  /**
   * Returned when the server cannot be reached (network failure, 429 or 5xx) and no cached copy
   * is left: a PromptVersion kept from earlier (e.g. saved at build time). Never used for a real
   * answer such as 404 or 401.
   */
  fallback?: PromptVersion;
  signal?: AbortSignal;
}

/** The prompt calls of {@link PromptrunClient} (`/api/v1/prompts`). */
export interface PromptsClient {
  /** A page of the tenant's prompt summaries in slug order. */
  list(options?: ListPromptsOptions): Promise<Page<PromptSummary>>;
  /** One prompt's summary; ApiError `not_found` for an unknown slug. */
  summary(slug: string, options?: { signal?: AbortSignal }): Promise<PromptSummary>;
  /** A page of a prompt's versions, newest first. */
  versions(slug: string, options?: ListPromptVersionsOptions): Promise<Page<PromptVersion>>;
  /** Pushes one prompt file; `created` is false when the newest version already has this content. */
  push(file: PromptFileInput, options?: { signal?: AbortSignal }): Promise<PushedPrompt>;
  /**
   * One version, through the client's prompt cache when it has one (`promptCache`): fresh
   * copies are served as they are, stale ones while a background request revalidates them.
   */
  get(slug: string, options?: GetPromptOptions): Promise<PromptVersion>;
}

const summaryPageSchema = pageOf(promptSummarySchema);
const versionPageSchema = pageOf(promptVersionSchema);

const queryOf = (values: Record<string, string | number | null | undefined>): string => {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(values))
    if (value !== undefined && value !== null) query.set(name, String(value));
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
};

function segmentOf(options: GetPromptOptions): string {
  if (options.version !== undefined && options.tag !== undefined)
    throw new TypeError("prompts.get: give `version` or `tag`, not both");
  return String(options.tag ?? options.version ?? "latest");
}

/** The prompt calls over `requester`, with a stale-while-revalidate cache when `cacheOptions` is given. */
export function createPromptsClient(
  requester: RestRequester,
  cacheOptions?: PromptCacheOptions,
): PromptsClient {
  const cache = cacheOptions === undefined ? null : createPromptCache(cacheOptions);
  const refreshes = new Map<string, Promise<void>>();
  const { request } = requester;

  /** GET the version, conditionally when an ETag is known; null for a 304. */
  const fetchVersion = async (path: string, etag: string | null, signal?: AbortSignal) => {
    const response = await requester.send("GET", path, {
      headers: etag === null ? {} : { "if-none-match": etag },
      signal,
    });
    if (response.status === 304) {
      await response.body?.cancel();
      return null;
    }
    if (!response.ok) throw await ApiError.fromResponse(response);
    const version = await requester.parse(response, `GET ${path}`, promptVersionSchema);
    return { version, etag: response.headers.get("etag") };
  };

  /** Asks the server (a 304 renews the cached entry) and caches the answer. */
  const revalidate = async (
    key: string,
    path: string,
    entry: PromptCacheEntry | null,
    signal?: AbortSignal,
  ) => {
    const fetched = await fetchVersion(path, entry?.etag ?? null, signal);
    const version = fetched?.version ?? entry?.version;
    if (version === undefined)
      throw new ApiError(304, "invalid_response", `GET ${path}: 304 without a request ETag`);
    cache?.confirm(key, version, fetched === null ? (entry?.etag ?? null) : fetched.etag);
    return version;
  };

  /** One background revalidation per entry at a time; its failure leaves the stale copy in place. */
  const refreshInBackground = (key: string, path: string, entry: PromptCacheEntry) => {
    if (refreshes.has(key)) return;
    const refresh = revalidate(key, path, entry)
      .then(
        () => {},
        () => {},
      )
      .finally(() => refreshes.delete(key));
    refreshes.set(key, refresh);
  };

  return {
    list(options = {}) {
      const { signal, ...query } = options;
      return request("GET", `/api/v1/prompts${queryOf({ ...query })}`, summaryPageSchema, { signal });
    },
    summary(slug, options = {}) {
      return request("GET", `/api/v1/prompts/${encodeURIComponent(slug)}`, promptSummarySchema, options);
    },
    versions(slug, options = {}) {
      const { signal, ...query } = options;
      const path = `/api/v1/prompts/${encodeURIComponent(slug)}/versions${queryOf(query)}`;
      return request("GET", path, versionPageSchema, { signal });
    },
    push(file, options = {}) {
      return request("POST", "/api/v1/prompts", pushedPromptSchema, { body: file, signal: options.signal });
    },
    async get(slug, options = {}) {
      const segment = segmentOf(options);
      const path = `/api/v1/prompts/${encodeURIComponent(slug)}/${encodeURIComponent(segment)}`;
      const cached = cache?.lookup(path) ?? null;
      if (cached?.state === "fresh") return cached.entry.version;
      if (cached?.state === "stale") {
        refreshInBackground(path, path, cached.entry);
        return cached.entry.version;
      }
      try {
        return await revalidate(path, path, cached?.entry ?? null, options.signal);
      } catch (error) {
        if (!ApiError.isInstance(error) || !error.isRetryable) throw error;
        if (cached !== null) return cached.entry.version;
        if (options.fallback !== undefined) return options.fallback;
        throw error;
      }
    },
  };
}
