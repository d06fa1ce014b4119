import type { PromptSummary, PromptVersion } from "@promptrun/contract";
import type { PromptRecord, PromptVersionRecord } from "../ports.ts";

export function toPromptVersion(record: PromptVersionRecord, tags: string[]): PromptVersion {
  return {
    id: record.id,
    slug: record.slug,
    version: record.version,
    model: record.definition.model,
    params: record.definition.params,
    inputs: record.definition.inputs,
    messages: record.definition.messages,
    output: record.definition.output ?? null,
    memory: record.definition.memory ?? null,
    providerOptions: record.definition.providerOptions ?? null,
    tools: record.definition.tools ?? [],
    toolChoice: record.definition.toolChoice ?? null,
    maxSteps: record.definition.maxSteps ?? null,
    toolTimeoutSeconds: record.definition.toolTimeoutSeconds ?? null,
    retrieval: record.definition.retrieval ?? null,
    description: record.definition.description ?? null,
    tags,
    createdAt: record.createdAt.toISOString(),
    contentHash: record.contentHash,
  };
}

export function toPromptSummary(record: PromptRecord): PromptSummary {
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

/** Tags of one version, from the prompt's tag → version map. */
export const tagsForVersion = (prompt: PromptRecord, version: number): string[] =>
  Object.entries(prompt.tags)
    .filter(([, number]) => number === version)
    .map(([tag]) => tag)
    .sort();
