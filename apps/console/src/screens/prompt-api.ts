/**
 * The REST calls of the prompt screens (playground, prompts, prompt detail) and their query keys.
 * Every call goes through `rest()`: the session cookie, the console header, `{"error"}` as a
 * ConsoleApiError.
 */
import type {
  CreateRunResponse,
  Page,
  PromptRun,
  PromptSummary,
  PromptVersion,
  PushResult,
  StreamTokenResponse,
  SubmitToolOutputsRequest,
  TagHistoryEntry,
  TagMove,
  UsageResponse,
} from "@promptrun/contract";
import { rest } from "../api/console-fetch.ts";

const part = encodeURIComponent;

/** Query keys: everything about one prompt sits under `["prompt", slug]`, so one invalidation refreshes it. */
export const promptKeys = {
  list: ["prompts"] as const,
  usage: ["prompts", "usage-24h"] as const,
  prompt: (slug: string) => ["prompt", slug] as const,
  summary: (slug: string) => ["prompt", slug, "summary"] as const,
  versions: (slug: string) => ["prompt", slug, "versions"] as const,
  version: (slug: string, version: string) => ["prompt", slug, "version", version] as const,
  tagHistory: (slug: string, tag: string) => ["prompt", slug, "tag-history", tag] as const,
};

/** Every page of a listing (the screens show whole lists: a tenant's prompts, a prompt's versions). */
async function allPages<T>(path: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const page: Page<T> = await rest<Page<T>>(
      `${path}${separator}limit=200${cursor ? `&cursor=${part(cursor)}` : ""}`,
    );
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

export const listPrompts = () => allPages<PromptSummary>("/prompts");

export const getPromptSummary = (slug: string) => rest<PromptSummary>(`/prompts/${part(slug)}`);

/** Whole versions, newest first. */
export const listVersions = (slug: string) => allPages<PromptVersion>(`/prompts/${part(slug)}/versions`);

/** One version by number, tag, `latest` or id. */
export const getVersion = (slug: string, version: string) =>
  rest<PromptVersion>(`/prompts/${part(slug)}/${part(version)}`);

/** Pushes one prompt file (the JSON of its YAML): a new version, or `created: false` when unchanged. */
export const pushPromptFile = (file: unknown) => rest<PushResult>("/prompts", { method: "POST", json: file });

/** The guarded move: refused (409) unless the tag points at `expectedVersion` (null: the tag is new). */
export const moveTag = (slug: string, tag: string, version: number, expectedVersion: number | null) =>
  rest<TagMove>(`/prompts/${part(slug)}/tags/${part(tag)}`, {
    method: "PUT",
    json: { version, expectedVersion },
  });

export const tagHistory = (slug: string, tag: string) =>
  allPages<TagHistoryEntry>(`/prompts/${part(slug)}/tags/${part(tag)}/history`);

/** Runs and cost per prompt of runs created in the last 24 hours. */
export function usageOfLastDay(now = new Date()) {
  const from = new Date(now.getTime() - 24 * 3600 * 1000).toISOString();
  return rest<UsageResponse>(`/usage?groupBy=prompt&from=${part(from)}&to=${part(now.toISOString())}`);
}

export const createRun = (
  slug: string,
  version: string,
  body: { inputs: Record<string, unknown>; thread: string },
) => rest<CreateRunResponse>(`/prompts/${part(slug)}/${part(version)}/runs`, { method: "POST", json: body });

export const getRun = (id: string) => rest<PromptRun>(`/promptruns/${part(id)}`);

export const mintStreamToken = (thread: string) =>
  rest<StreamTokenResponse>(`/threads/${part(thread)}/stream-token`, { method: "POST" });

export const submitToolOutputs = (runId: string, body: SubmitToolOutputsRequest) =>
  rest<CreateRunResponse>(`/promptruns/${part(runId)}/tool-outputs`, { method: "POST", json: body });
