export { toWorkflowSummary, toWorkflowVersion } from "./to-workflow-version.ts";
export { createWorkflowService, type WorkflowServiceDependencies } from "./workflow-service.ts";
