import { slugSchema } from "@promptrun/contract";
import { notFound } from "@promptrun/core";
import { requireUuidParam } from "../path-params.ts";

/** A malformed knowledge base slug is a 404, like an unknown one (as prompt slugs). */
export function requireKnowledgeBaseParam(params: Record<string, string>): string {
  const { kb } = params;
  if (kb === undefined || !slugSchema.safeParse(kb).success) throw notFound("knowledge base not found");
  return kb;
}

/** `{kb}` and a document `{id}` (not a UUID: 404). */
export function requireDocumentParams(params: Record<string, string>): { slug: string; id: string } {
  const slug = requireKnowledgeBaseParam(params);
  return { slug, id: requireUuidParam(params.id, "document not found") };
}

/** Where a document is read: the `Location` of an accepted upload. */
export const documentLocation = (slug: string, id: string): string =>
  `/api/v1/knowledge-bases/${slug}/documents/${id}`;

/** Lists, documents and search results change as ingestion runs: never cached. */
export const NO_STORE = { "cache-control": "no-store" } as const;
