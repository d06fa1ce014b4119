export { createWorkflowService } from "./workflow-service.ts";
