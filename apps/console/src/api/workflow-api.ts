/**
 * The tRPC procedures of workflows the console calls (`workflow.get`, `workflowRun.get|list|cancel`,
 * docs/WORKFLOWS.md), typed by the contract's shapes.
 */
import type { Page, WorkflowRun, WorkflowRunListRequest, WorkflowVersion } from "@promptrun/contract";
import { useTRPCClient } from "./trpc.ts";

/** What the console needs of the workflow procedures, as the contract describes them. */
interface WorkflowProcedures {
  workflow: {
    get: { query(input: { slug: string; version: string }): Promise<WorkflowVersion> };
  };
  workflowRun: {
    get: { query(input: { id: string }): Promise<WorkflowRun> };
    list: { query(input: WorkflowRunListRequest): Promise<Page<WorkflowRun>> };
    cancel: { mutate(input: { id: string }): Promise<unknown> };
  };
}

/**
 * Typed by the contract rather than by tRPC's inferred output: inference turns the `unknown`
 * fields (`outputJson`, `inputs`) into optional ones, while the server always sends them.
 */
type WorkflowClient = WorkflowProcedures;

/** The console's tRPC client, for the workflow procedures. */
export const useWorkflowClient = (): WorkflowClient => useTRPCClient() as unknown as WorkflowClient;

export const workflowRunKey = (id: string) => ["workflowRun", id] as const;
export const workflowVersionKey = (slug: string, version: number) => ["workflow", slug, version] as const;
