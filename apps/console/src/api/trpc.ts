import type { AppRouter } from "@promptrun/api";
import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { ConsoleApiError, consoleFetch } from "./console-fetch.ts";
import { SESSION_QUERY_KEY } from "./session.ts";

/** The console's typed tRPC (the same procedures an API key reaches), through @tanstack/react-query. */
export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

/** A 401 from REST or tRPC: the session ended (expired, signed out elsewhere, its key revoked). */
const sessionEnded = (error: unknown): boolean =>
  (error instanceof ConsoleApiError && error.status === 401) ||
  (error instanceof TRPCClientError &&
    (error.data as { httpStatus?: number } | undefined)?.httpStatus === 401);

/**
 * The console's query client. When any call answers 401 the sign-in page shows at once (not an
 * error on every screen) and every answer of the ended session is forgotten, so whoever signs in
 * next never sees them (docs/console.md "Serving and sign-in").
 */
export const createQueryClient = () => {
  const onError = (error: unknown) => {
    if (!sessionEnded(error)) return;
    queryClient.setQueryData(SESSION_QUERY_KEY, null);
    queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== SESSION_QUERY_KEY[0] });
  };
  const queryClient: QueryClient = new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } },
  });
  return queryClient;
};

/** The server refuses a batch of more than 10 calls (docs/ARCHITECTURE.md, request limits). */
const MAX_BATCH_CALLS = 10;

export const createConsoleTrpcClient = () =>
  createTRPCClient<AppRouter>({
    links: [httpBatchLink({ url: "/trpc", fetch: consoleFetch, maxItems: MAX_BATCH_CALLS })],
  });
