import { slugSchema } from "@promptrun/contract";
import { notFound } from "@promptrun/core";
import { isVersionSegment, requireUuidParam } from "../path-params.ts";

/** A malformed workflow slug is a 404, like an unknown one (as prompt slugs). */
export function requireWorkflowSlug(params: Record<string, string>): string {
  const { slug } = params;
  if (slug === undefined || !slugSchema.safeParse(slug).success) throw notFound("workflow not found");
  return slug;
}

/** Slug and version segment (number, tag, `latest` or id) of a workflow URL; anything malformed is a 404. */
export function requireWorkflowPath(params: Record<string, string>): { slug: string; version: string } {
  const slug = requireWorkflowSlug(params);
  const { version } = params;
  if (version === undefined || !isVersionSegment(version)) throw notFound("workflow version not found");
  return { slug, version };
}

/** A workflow run id that is not a UUID is a 404 before authentication (as prompt run ids). */
export const requireWorkflowRunId = (params: Record<string, string>): string =>
  requireUuidParam(params.id, "workflow run not found");

/** Where a workflow version and a workflow run are read: the `Location` of a push and of a create. */
export const workflowVersionLocation = (slug: string, version: number): string =>
  `/api/v1/workflows/${slug}/${version}`;
export const workflowRunLocation = (id: string): string => `/api/v1/workflowruns/${id}`;

/** Versions, lists and runs change with pushes and steps: never cached. */
export const NO_STORE = { "cache-control": "no-store" } as const;
