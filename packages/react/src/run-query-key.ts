/** The react-query key of a run: `useRun` reads it, `useThreadStream` invalidates it when the run ends. */
export const runQueryKey = (id: string) => ["promptrun", "run", id] as const;
/** The react-query key of a workflow run: `useWorkflowRun` reads it and refreshes it on the thread's `workflow.*` events. */
export const workflowRunQueryKey = (id: string) => ["promptrun", "workflow-run", id] as const;
