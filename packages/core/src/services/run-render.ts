import { type RenderedPrompt, renderRequestSchema } from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import { checkMediaInputs } from "../inputs/media-input.ts";
import type { Store } from "../ports.ts";
import { maskedEnv, renderRunRequest, retrievalPreview } from "../rendering/run-request.ts";
import type { RateLimitService } from "../services.ts";
import { renderedTools } from "./rendered-tools.ts";
import { checkRunBody, requireRunEnvironment, resolveRunVersion } from "./run-request-checks.ts";

export interface RunRenderDependencies {
  store: Pick<Store, "prompts" | "environments" | "runs">;
  config: Pick<PromptrunConfig, "allowPrivateUrls" | "memory">;
  rateLimits: Pick<RateLimitService, "take">;
}

export type RenderPrompt = (
  tenantId: string,
  slug: string,
  versionSegment: string,
  body: unknown,
) => Promise<RenderedPrompt>;

/**
 * Render (docs/PRODUCT-RULES.md "Render"): the request a run of the version would send, through
 * the engine's own renderRunRequest, without calling a model. The checks are create-run's, in its
 * order; no subscription is needed (a read). Env var values are never read: every name set on the
 * environment or in `envVars` renders as `[env:NAME]`, a name set nowhere fails as the run would.
 */
export function createRunRender({ store, config, rateLimits }: RunRenderDependencies): RenderPrompt {
  return async (tenantId, slug, versionSegment, body) => {
    const version = await resolveRunVersion(store, tenantId, slug, versionSegment);
    const { request, inputs } = checkRunBody(version, renderRequestSchema, body);
    const { record: environment } = await requireRunEnvironment(store, tenantId, request.environment);
    // Its own bucket, sized as create-run's: the media checks below resolve host names.
    await rateLimits.take(tenantId, "prompts.render");
    const { definition } = version;
    await checkMediaInputs(definition.inputs, inputs, { allowPrivateUrls: config.allowPrivateUrls });

    const names = Object.keys(await store.environments.getEnvVars(environment.id));
    names.push(...Object.keys(request.envVars ?? {}));
    const thread = request.thread?.toLowerCase();
    const memory =
      thread === undefined
        ? null
        : {
            runs: store.runs,
            bound: config.memory,
            channel: { tenantId, threadId: thread, channel: request.channel ?? "default" },
          };
    // No search is made (a render is a read): {{retrieval}} shows what the run would search.
    const retrieval = retrievalPreview(definition.retrieval, inputs);
    const rendered = await renderRunRequest(definition, inputs, maskedEnv(names), memory, retrieval);
    return {
      model: definition.model,
      params: definition.params,
      messages: rendered.messages,
      tools: renderedTools(definition.tools),
      output: definition.output ?? null,
      providerOptions: definition.providerOptions ?? null,
      memory: rendered.memoryWindow,
    };
  };
}
