import type { AppRouter } from "@promptrun/api";
import { createTRPCClient, httpLink, type TRPCClient } from "@trpc/client";

/** Options of {@link createPromptrunTrpcClient}. */
export interface PromptrunTrpcClientOptions {
  /** Promptrun's tRPC endpoint, e.g. `https://promptrun.example.com/trpc`. */
  url: string;
  /**
   * The bearer credential per request. In a browser: a stream token (it may read the runs of
   * its thread with `run.get`, nothing else). On a server: the API key.
   */
  getToken: () => string | Promise<string>;
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

/**
 * A typed tRPC client of Promptrun (`AppRouter`, imported as a type only). For example
 * `client.run.get.query({ id })`, usable as `useRun(id, { getRun })`.
 */
export function createPromptrunTrpcClient(options: PromptrunTrpcClientOptions): TRPCClient<AppRouter> {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: options.url,
        headers: async () => ({ authorization: `Bearer ${await options.getToken()}` }),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ],
  });
}
