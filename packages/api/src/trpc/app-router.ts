import { createProcedures, createTrpcRoot, type TrpcRootOptions } from "./root.ts";
import { createAdminRouter } from "./routers/admin-router.ts";
import { createEnvironmentRouter } from "./routers/environment-router.ts";
import { createKeyRouter } from "./routers/key-router.ts";
import { createKnowledgeBaseRouter } from "./routers/knowledge-base-router.ts";
import { createPromptRouter } from "./routers/prompt-router.ts";
import { createRunRouter } from "./routers/run-router.ts";
import { createThreadRouter } from "./routers/thread-router.ts";
import { createUsageRouter } from "./routers/usage-router.ts";
import { createWebhookRouter } from "./routers/webhook-router.ts";
import { createWorkflowRouter } from "./routers/workflow-router.ts";
import { createWorkflowRunRouter } from "./routers/workflow-run-router.ts";

/** The whole tRPC surface: routers are nouns, procedures verbs, subscriptions `on…`. */
export function createAppRouter(options: TrpcRootOptions) {
  const t = createTrpcRoot(options);
  const procedures = createProcedures(t);
  return t.router({
    prompt: createPromptRouter(t, procedures),
    run: createRunRouter(t, procedures),
    thread: createThreadRouter(t, procedures),
    usage: createUsageRouter(t, procedures),
    environment: createEnvironmentRouter(t, procedures),
    webhook: createWebhookRouter(t, procedures),
    key: createKeyRouter(t, procedures),
    knowledgeBase: createKnowledgeBaseRouter(t, procedures),
    workflow: createWorkflowRouter(t, procedures),
    workflowRun: createWorkflowRunRouter(t, procedures),
    admin: createAdminRouter(t, procedures),
  });
}
