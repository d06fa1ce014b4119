import { ApiError } from "@promptrun/client";
import type { KnowledgeDocument, MetadataFilter, SearchMode, SearchResponse } from "@promptrun/contract";
import { keepPreviousData, type UseQueryResult, useQuery } from "@tanstack/react-query";
import { usePromptrunBackend } from "./promptrun-provider.tsx";
import { requireBackendMethod } from "./require-backend-method.ts";

/** Retrying a 404 or 400 cannot help; network errors, 429 and 5xx can. */
const retryTransient = (failures: number, error: Error) =>
  failures < 3 && (!ApiError.isInstance(error) || error.isRetryable);

/** Options of {@link useKnowledgeSearch}. */
export interface UseKnowledgeSearchOptions {
  /** 1–50, default 5. */
  topK?: number;
  /** hybrid (default), vector or keyword. */
  mode?: SearchMode;
  filter?: MetadataFilter;
  enabled?: boolean;
}

/**
 * Searches a knowledge base through the app's backend (`searchKnowledge`). Nothing is sent while
 * the query is blank; while a new query loads, the previous results stay (type-ahead without flicker).
 */
export function useKnowledgeSearch(
  knowledgeBase: string | null | undefined,
  query: string,
  options: UseKnowledgeSearchOptions = {},
): UseQueryResult<SearchResponse, Error> {
  const backend = usePromptrunBackend();
  const { topK, mode, filter } = options;
  const trimmed = query.trim();
  return useQuery({
    queryKey: ["promptrun", "knowledge-search", knowledgeBase ?? "", trimmed, topK, mode, filter],
    queryFn: ({ signal }) =>
      requireBackendMethod(backend, "searchKnowledge")(
        knowledgeBase!,
        {
          query: trimmed,
          ...(topK !== undefined ? { topK } : {}),
          ...(mode !== undefined ? { mode } : {}),
          ...(filter !== undefined ? { filter } : {}),
        },
        { signal },
      ),
    enabled: Boolean(knowledgeBase) && trimmed !== "" && (options.enabled ?? true),
    placeholderData: keepPreviousData,
    retry: retryTransient,
  });
}

/** Options of {@link useDocument}. */
export interface UseDocumentOptions {
  /** Poll interval while the document is pending or processing, in ms (default 1000). */
  intervalMs?: number;
  enabled?: boolean;
}

const isIngesting = (document: KnowledgeDocument | undefined) =>
  document?.status === "pending" || document?.status === "processing";

/**
 * Reads a document of a knowledge base through the app's backend (`getDocument`) and polls it
 * while it is `pending` or `processing`; polling stops once it is `ready` or `failed` (`error` says why).
 */
export function useDocument(
  knowledgeBase: string | null | undefined,
  id: string | null | undefined,
  options: UseDocumentOptions = {},
): UseQueryResult<KnowledgeDocument, Error> {
  const backend = usePromptrunBackend();
  const intervalMs = options.intervalMs ?? 1_000;
  return useQuery({
    queryKey: ["promptrun", "document", knowledgeBase ?? "", id ?? ""],
    queryFn: ({ signal }) => requireBackendMethod(backend, "getDocument")(knowledgeBase!, id!, { signal }),
    enabled: Boolean(knowledgeBase) && Boolean(id) && (options.enabled ?? true),
    refetchInterval: (query) => (isIngesting(query.state.data) ? intervalMs : false),
    retry: retryTransient,
  });
}
