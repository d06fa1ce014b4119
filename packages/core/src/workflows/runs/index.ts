export { createWorkflowRuns, type WorkflowRuns } from "./create-workflow-runs.ts";
