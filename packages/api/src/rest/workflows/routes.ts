import type { RestHandler } from "../rest-context.ts";
import {
  cancelWorkflowRunHandler,
  createWorkflowRunHandler,
  getWorkflowRunHandler,
  listWorkflowRunsHandler,
} from "./workflow-runs.ts";
import {
  getWorkflowVersionHandler,
  listWorkflowsHandler,
  listWorkflowVersionsHandler,
  pushWorkflowHandler,
  setWorkflowTagHandler,
} from "./workflows.ts";

/** The workflow routes (docs/WORKFLOWS.md), `[method, pattern, handler]`, registered by the app. */
export const workflowRoutes: ReadonlyArray<readonly [string, string, RestHandler]> = [
  // GET first on each path: a 405's Allow reads `GET, HEAD, POST` as on the other paths.
  ["GET", "/api/v1/workflows", listWorkflowsHandler],
  ["POST", "/api/v1/workflows", pushWorkflowHandler],
  // Before `/:slug/:version`: the static segment wins (a tag named `versions` is read by number or id).
  ["GET", "/api/v1/workflows/:slug/versions", listWorkflowVersionsHandler],
  ["PUT", "/api/v1/workflows/:slug/tags/:tag", setWorkflowTagHandler],
  ["GET", "/api/v1/workflows/:slug/:version", getWorkflowVersionHandler],
  ["POST", "/api/v1/workflows/:slug/:version/runs", createWorkflowRunHandler],
  ["GET", "/api/v1/workflowruns", listWorkflowRunsHandler],
  ["GET", "/api/v1/workflowruns/:id", getWorkflowRunHandler],
  ["POST", "/api/v1/workflowruns/:id/cancel", cancelWorkflowRunHandler],
];
