/**
 * The demo knowledge base (docs/KNOWLEDGE.md): `acme-docs`, embedded with the built-in keyless
 * `dev:hash`, holding the Markdown files of knowledge/demo (a fictional product's warranty,
 * returns, shipping and safety pages). The demo prompt `ask-docs` retrieves from it. The files
 * are only queued here: the ingestion worker makes them searchable once the server has started.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { KnowledgeService } from "@promptrun/core";

export const DEMO_KNOWLEDGE_DIR = resolve(import.meta.dir, "../../../knowledge/demo");
export const DEMO_KNOWLEDGE_BASE = "acme-docs";

/** Creates `acme-docs` for the tenant and queues every Markdown file of `directory`; returns their names. */
export async function seedDemoKnowledge(
  knowledge: KnowledgeService,
  tenantId: string,
  directory = DEMO_KNOWLEDGE_DIR,
): Promise<string[]> {
  const files = readdirSync(directory)
    .filter((name) => name.endsWith(".md"))
    .sort();
  await knowledge.create(tenantId, {
    slug: DEMO_KNOWLEDGE_BASE,
    description: "Acme Rocket Skates: warranty, returns, shipping and safety (the demo of prompt ask-docs).",
    embeddingModel: "dev:hash",
    chunking: { maxTokens: 256, overlap: 32 },
  });
  for (const filename of files) {
    await knowledge.addDocument(tenantId, DEMO_KNOWLEDGE_BASE, {
      content: new Uint8Array(readFileSync(join(directory, filename))),
      filename,
      mediaType: "text/markdown",
      // The same file seeded again replaces itself rather than duplicating.
      externalId: `demo/${filename}`,
      metadata: { source: "demo" },
    });
  }
  return files;
}
