import type { AppRouter } from "@promptrun/api";
import { QueryClient } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { consoleFetch } from "./console-fetch.ts";

/** The console's typed tRPC (the same procedures an API key reaches), through @tanstack/react-query. */
export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

export const createQueryClient = () =>
  new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } });

/** The server refuses a batch of more than 10 calls (docs/ARCHITECTURE.md, request limits). */
const MAX_BATCH_CALLS = 10;

export const createConsoleTrpcClient = () =>
  createTRPCClient<AppRouter>({
    links: [httpBatchLink({ url: "/trpc", fetch: consoleFetch, maxItems: MAX_BATCH_CALLS })],
  });
