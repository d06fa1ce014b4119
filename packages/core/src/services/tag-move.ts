import { type SetTagRequest, setTagRequestSchema, tagSchema } from "@promptrun/contract";
import { invalid } from "../errors.ts";
import type { AuthenticatedTenant, TenantRecord } from "../ports.ts";
import { formatValidationError } from "./format-validation-error.ts";

/** A tag named in a path: `latest` and version-number-like names are 400 (the contract's tagSchema). */
export function requireTag(tag: string): string {
  const parsed = tagSchema.safeParse(tag);
  if (!parsed.success) throw invalid(`tag '${tag}': ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}

/** The body of a tag move (docs/PRODUCT-RULES.md "Prompts over REST"). */
export function parseTagRequest(body: unknown): SetTagRequest {
  const parsed = setTagRequestSchema.safeParse(body);
  if (!parsed.success) throw invalid(formatValidationError(parsed.error));
  return parsed.data;
}

/** A failed guard says where the tag points now, so the caller can decide again. */
export function describeTagConflict(slug: string, tag: string, current: number | null): string {
  return current === null
    ? `tag '${tag}' of prompt '${slug}' does not exist (expectedVersion did not match)`
    : `tag '${tag}' of prompt '${slug}' points at version ${current} (expectedVersion did not match)`;
}

/** Who moves a tag over REST or tRPC: the API key's prefix (docs/PRODUCT-RULES.md, tag history). */
export const movedByOf = (tenant: TenantRecord | AuthenticatedTenant): string =>
  ("apiKeyPrefix" in tenant ? tenant.apiKeyPrefix : undefined) ?? "api";
