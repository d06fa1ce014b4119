/**
 * The demo workflows (docs/WORKFLOWS.md): the files of the root `workflows/` folder, pushed into
 * the demo tenant after its prompts and its knowledge base, which their steps name (keyless, on
 * the development model: `support-triage` runs classify-ticket and answer-ticket on dev:echo and
 * searches acme-docs).
 */
import { resolve } from "node:path";
import { readPromptFiles } from "./prompt-files.ts";
import type { Runtime } from "./server.ts";

export const DEMO_WORKFLOWS_DIR = resolve(import.meta.dir, "../../../workflows");

type WorkflowService = Runtime["promptrun"]["services"]["workflows"];

/** Pushes every workflow file of `directory` (YAML or JSON) into the tenant; returns slug and version of each. */
export async function seedDemoWorkflows(
  workflows: Pick<WorkflowService, "push">,
  tenantId: string,
  directory = DEMO_WORKFLOWS_DIR,
): Promise<Array<{ slug: string; version: number }>> {
  const files = readPromptFiles(directory);
  if (files.length === 0) return [];
  const pushed = await workflows.push(tenantId, files);
  return pushed.map(({ slug, version }) => ({ slug, version }));
}
