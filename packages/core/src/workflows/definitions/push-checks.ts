/**
 * What a workflow push checks (docs/WORKFLOWS.md "Workflow files"): the file's schema and size,
 * its graph (graph.ts), then, in the pushing tenant, that every prompt reference resolves now
 * and that the step fills the inputs of that version, and that every retrieve step's knowledge
 * base exists. Every message names the workflow and the path of the problem.
 */
import { WORKFLOW_FILE_MAX_BYTES, type WorkflowDefinition, workflowFileSchema } from "@promptrun/contract";
import { invalid, PromptrunError } from "../../errors.ts";
import type { PromptVersionRecord, Store } from "../../ports.ts";
import { canonicalHash, canonicalJson } from "../../services/canonical-json.ts";
import { formatValidationError } from "../../services/format-validation-error.ts";
import { describeMissingVersion } from "../../services/parse-version-segment.ts";
import { type CompiledStep, type CompiledWorkflow, compileWorkflow } from "../graph.ts";

export interface CheckedWorkflowFile {
  slug: string;
  tags: string[];
  definition: WorkflowDefinition;
  contentHash: string;
  graph: CompiledWorkflow;
}

const labelOf = (file: unknown, index: number): string =>
  typeof file === "object" && file !== null && "slug" in file && typeof file.slug === "string"
    ? file.slug
    : `#${index + 1}`;

/** Re-throws a PromptrunError with the workflow it concerns named first. */
async function inWorkflow<T>(slug: string, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (PromptrunError.isInstance(error) && error.code === "invalid")
      throw invalid(`workflow '${slug}': ${error.message}`);
    throw error;
  }
}

/** The file's canonical JSON, refused past WORKFLOW_FILE_MAX_BYTES (or too deep to serialize). */
function canonicalSize(value: unknown): number {
  try {
    return Buffer.byteLength(canonicalJson(value), "utf8");
  } catch (error) {
    if (error instanceof RangeError) throw invalid("the file is nested too deeply");
    throw error;
  }
}

/** Schema, size and graph of one file: everything that does not depend on the tenant. */
export async function parseWorkflowFile(file: unknown, index: number): Promise<CheckedWorkflowFile> {
  const label = labelOf(file, index);
  const result = workflowFileSchema.safeParse(file);
  if (!result.success)
    throw invalid(`workflow '${label}': ${formatValidationError(result.error, "workflow file")}`);
  const { slug, tags, ...definition } = result.data;
  return inWorkflow(slug, () => {
    const bytes = canonicalSize(result.data);
    if (bytes > WORKFLOW_FILE_MAX_BYTES)
      throw invalid(`the file is ${bytes} bytes as JSON; at most ${WORKFLOW_FILE_MAX_BYTES} are allowed`);
    const graph = compileWorkflow(definition);
    return { slug, tags, definition, contentHash: canonicalHash(definition), graph };
  });
}

/** Each prompt reference resolves in this tenant now; each knowledge base exists in it. */
export async function checkTenantReferences(
  store: Store,
  tenantId: string,
  workflow: CheckedWorkflowFile,
): Promise<void> {
  await inWorkflow(workflow.slug, async () => {
    for (const step of workflow.graph.steps) {
      if (step.kind === "prompt") await checkPromptStep(store, tenantId, step);
      else await checkRetrieveStep(store, tenantId, step);
    }
  });
}

async function checkPromptStep(store: Store, tenantId: string, step: CompiledStep): Promise<void> {
  const reference = step.prompt;
  if (reference === null) return;
  const path = `steps[${step.index}]`;
  const version = await store.prompts.resolveVersion(tenantId, reference.slug, reference.selector);
  if (!version) {
    // Tenant-scoped reads only: another tenant's prompt reads exactly like an unknown one.
    const prompt = await store.prompts.getPrompt(tenantId, reference.slug);
    const reason = prompt
      ? describeMissingVersion(reference.slug, reference.selector)
      : `prompt '${reference.slug}' not found`;
    throw invalid(`${path}.prompt: ${reason}`);
  }
  checkStepInputs(step, version);
}

/** The step fills every required input of the version and names no input it does not declare. */
function checkStepInputs(step: CompiledStep, version: PromptVersionRecord): void {
  const path = `steps[${step.index}]`;
  const given = step.definition.inputs ?? {};
  const declared = version.definition.inputs;
  const described = `prompt '${step.definition.prompt}' (version ${version.version})`;
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(declared, name))
      throw invalid(`${path}.inputs.${name}: ${described} declares no input '${name}'`);
  }
  for (const [name, declaration] of Object.entries(declared)) {
    if (declaration.optional === true || declaration.default !== undefined) continue;
    if (!Object.hasOwn(given, name))
      throw invalid(`${path}.inputs: step '${step.id}' does not fill input '${name}' of ${described}`);
  }
}

async function checkRetrieveStep(store: Store, tenantId: string, step: CompiledStep): Promise<void> {
  const slug = step.definition.retrieve?.knowledgeBase;
  if (slug === undefined) return;
  if (!(await store.knowledge.getKnowledgeBase(tenantId, slug)))
    throw invalid(`steps[${step.index}].retrieve.knowledgeBase: knowledge base '${slug}' not found`);
}
