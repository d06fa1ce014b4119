/**
 * How a workflow run's steps start (docs/WORKFLOWS.md "Steps"): a prompt step becomes an ordinary
 * prompt run of the pinned prompt version, its inputs checked as a run create checks them; a
 * retrieve step searches its knowledge base here, its chunks numbered as `{{retrieval}}` shows them.
 */
import { DEFAULT_SEARCH_TOP_K } from "@promptrun/contract";
import { RunKnowledge } from "../../engine/retrieval.ts";
import { invalid } from "../../errors.ts";
import { checkMediaInputs } from "../../inputs/media-input.ts";
import { assertModelTakesPromptFields } from "../../models/call-options.ts";
import type { NewRun } from "../../ports.ts";
import { validateInputs } from "../../templating/template.ts";
import type { CompiledStep } from "../graph.ts";
import type { WorkflowRunRecord } from "../ports.ts";
import type { StepActions } from "./plan-advance.ts";
import type { WorkflowRunContext } from "./workflow-run-context.ts";

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The step actions of one advance of `run`; `envVars` are the run's plaintext overrides. */
export function stepActionsOf(
  context: WorkflowRunContext,
  run: WorkflowRunRecord,
  envVars: Record<string, string> | undefined,
): StepActions {
  const { deps } = context;
  return {
    async startPrompt(step, inputs) {
      const versionId = run.promptVersions[step.id];
      const slug = step.prompt?.slug ?? "";
      const version = versionId ? await context.promptVersionOf(run.tenantId, slug, versionId) : null;
      if (!version) throw invalid(`prompt '${step.definition.prompt}' (pinned version) no longer exists`);
      if (!isPlainObject(inputs)) throw invalid("inputs: must be an object");
      const { definition } = version;
      const checked = validateInputs(definition.inputs, inputs);
      assertModelTakesPromptFields({
        modelRef: definition.model,
        params: definition.params,
        providerOptions: definition.providerOptions,
      });
      await checkMediaInputs(definition.inputs, checked, { allowPrivateUrls: deps.config.allowPrivateUrls });
      return promptStepRun(context, run, step, version, checked, envVars);
    },
    async retrieve(step, query) {
      const spec = step.definition.retrieve;
      if (!spec) throw invalid("not a retrieve step");
      const knowledge = await RunKnowledge.open(deps.knowledge, run.tenantId, []);
      const entry = await knowledge.search(spec.knowledgeBase, {
        query,
        topK: spec.topK ?? DEFAULT_SEARCH_TOP_K,
        mode: spec.mode ?? "hybrid",
        ...(spec.filter ? { filter: spec.filter } : {}),
      });
      const chunks = entry.chunks.map((chunk) => ({ ...chunk, text: knowledge.textOf(chunk.chunkId) ?? "" }));
      return { output: knowledge.numbered(entry), outputJson: { chunks } };
    },
  };
}

function promptStepRun(
  context: WorkflowRunContext,
  run: WorkflowRunRecord,
  step: CompiledStep,
  version: { id: string; promptId: string; slug: string; version: number },
  inputs: Record<string, unknown>,
  envVars: Record<string, string> | undefined,
): NewRun {
  const { deps } = context;
  return {
    id: deps.newId(),
    tenantId: run.tenantId,
    threadId: run.threadId,
    channel: step.channel,
    promptId: version.promptId,
    promptVersionId: version.id,
    promptSlug: version.slug,
    promptVersion: version.version,
    priority: run.priority,
    environment: run.environment,
    inputs,
    metadata: run.metadata,
    // Encrypted again (a fresh nonce) for the step run, which keeps it until it ends.
    encryptedEnvVars: envVars ? deps.secrets.encryptJson(envVars) : null,
    createdAt: deps.clock.now(),
    workflowRun: { id: run.id, step: step.id },
  };
}
