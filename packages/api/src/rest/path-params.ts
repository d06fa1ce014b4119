import { isUuid, slugSchema, tagSchema } from "@promptrun/contract";
import { notFound } from "@promptrun/core";

const VERSION_NUMBER = /^[1-9][0-9]*$/;

/** A path id that is not a UUID is a 404 (docs/PRODUCT-RULES.md "Status codes and error order": malformed path ids come first). */
export function requireUuidParam(value: string | undefined, message: string): string {
  if (value === undefined || !isUuid(value)) throw notFound(message);
  return value;
}

/** A version segment is a UUID, a version number, `latest` or a well-formed tag. */
export const isVersionSegment = (segment: string): boolean =>
  segment === "latest" ||
  VERSION_NUMBER.test(segment) ||
  isUuid(segment) ||
  tagSchema.safeParse(segment).success;

/** Slug and version segment of a prompt URL; anything malformed (traversal, junk encodings) is a 404. */
export function requirePromptPath(params: Record<string, string>): { slug: string; version: string } {
  const { slug, version } = params;
  if (slug === undefined || !slugSchema.safeParse(slug).success) throw notFound("prompt not found");
  if (version === undefined || !isVersionSegment(version)) throw notFound("prompt version not found");
  return { slug, version };
}
