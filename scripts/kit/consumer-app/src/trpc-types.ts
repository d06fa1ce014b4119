/**
 * Typechecked only: the typed tRPC client of @promptrun/react/trpc works in an app that has none
 * of the server's code. The @ts-expect-error lines fail the typecheck if the types were `any`.
 */
import { type AppRouter, createPromptrunTrpcClient } from "@promptrun/react/trpc";
import type { inferRouterOutputs } from "@trpc/server";

export const trpc = createPromptrunTrpcClient({ url: "/trpc", getToken: () => "token" });

export async function runStatus(id: string): Promise<"pending" | "completed" | "failed"> {
  const run = await trpc.run.get.query({ id });
  // @ts-expect-error a run has no such field
  void run.noSuchField;
  // @ts-expect-error the input is validated: id is a string
  void trpc.run.get.query({ id: 42 });
  return run.status;
}

export type RunOutput = inferRouterOutputs<AppRouter>["run"]["get"];
export const output = (run: RunOutput): string | null => run.output;
