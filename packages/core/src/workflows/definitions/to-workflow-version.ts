/** Stored workflow records → the contract's WorkflowVersion and WorkflowSummary. */
import type { WorkflowSummary, WorkflowVersion } from "@promptrun/contract";
import type { VersionSelector } from "../../ports.ts";
import type { WorkflowRecord, WorkflowVersionRecord } from "../ports.ts";

export function toWorkflowVersion(record: WorkflowVersionRecord, tags: string[]): WorkflowVersion {
  const { definition } = record;
  return {
    id: record.id,
    slug: record.slug,
    version: record.version,
    description: definition.description ?? null,
    inputs: definition.inputs,
    steps: definition.steps,
    output: definition.output ?? null,
    tags,
    createdAt: record.createdAt.toISOString(),
    contentHash: record.contentHash,
  };
}

export function toWorkflowSummary(record: WorkflowRecord): WorkflowSummary {
  return {
    id: record.id,
    slug: record.slug,
    description: record.description,
    latestVersion: record.latestVersion,
    tags: record.tags,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** Tags of one version, from the workflow's tag → version map. */
export const workflowTagsForVersion = (workflow: WorkflowRecord, version: number): string[] =>
  Object.entries(workflow.tags)
    .filter(([, number]) => number === version)
    .map(([tag]) => tag)
    .sort();

/** "workflow 'triage' has no version 3", "… has no version or tag 'beta'", … (as prompts say it). */
export function describeMissingWorkflowVersion(slug: string, selector: VersionSelector): string {
  switch (selector.kind) {
    case "id":
      return `workflow '${slug}' has no version with id '${selector.id}'`;
    case "number":
      return `workflow '${slug}' has no version ${selector.version}`;
    case "latest":
      return `workflow '${slug}' has no versions`;
    case "tag":
      return `workflow '${slug}' has no version or tag '${selector.tag}'`;
  }
}
