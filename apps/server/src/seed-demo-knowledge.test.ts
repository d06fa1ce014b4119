import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { DocumentUpload, KnowledgeService } from "@promptrun/core";
import { DEMO_KNOWLEDGE_BASE, DEMO_KNOWLEDGE_DIR, seedDemoKnowledge } from "./seed-demo-knowledge.ts";

/** Records what the seed asks of the service (the real service is tested end to end in tests/). */
function recordingService() {
  const created: unknown[] = [];
  const added: Array<{ tenantId: string; slug: string; upload: DocumentUpload }> = [];
  const service = {
    async create(_tenantId: string, body: unknown) {
      created.push(body);
      return {} as Awaited<ReturnType<KnowledgeService["create"]>>;
    },
    async addDocument(tenantId: string, slug: string, upload: DocumentUpload) {
      added.push({ tenantId, slug, upload });
      return { id: crypto.randomUUID(), status: "pending" as const };
    },
  } as unknown as KnowledgeService;
  return { service, created, added };
}

describe("seedDemoKnowledge", () => {
  test("creates acme-docs on dev:hash and queues every Markdown file of knowledge/demo", async () => {
    const { service, created, added } = recordingService();
    const files = await seedDemoKnowledge(service, "tenant-1");
    const onDisk = readdirSync(DEMO_KNOWLEDGE_DIR)
      .filter((name) => name.endsWith(".md"))
      .sort();
    expect(files).toEqual(onDisk);
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(created).toEqual([
      expect.objectContaining({ slug: DEMO_KNOWLEDGE_BASE, embeddingModel: "dev:hash" }),
    ]);
    expect(
      added.map((call) => [call.tenantId, call.slug, call.upload.filename, call.upload.mediaType]),
    ).toEqual(files.map((name) => ["tenant-1", DEMO_KNOWLEDGE_BASE, name, "text/markdown"]));
    for (const call of added) {
      const name = String(call.upload.filename);
      expect(new TextDecoder().decode(call.upload.content)).toBe(
        readFileSync(join(DEMO_KNOWLEDGE_DIR, name), "utf8"),
      );
      expect(call.upload.externalId).toBe(`demo/${name}`);
    }
  });

  test("the demo files are short and each states facts the others do not", () => {
    expect(existsSync(DEMO_KNOWLEDGE_DIR)).toBe(true);
    const texts = readdirSync(DEMO_KNOWLEDGE_DIR)
      .filter((name) => name.endsWith(".md"))
      .map((name) => readFileSync(join(DEMO_KNOWLEDGE_DIR, name), "utf8"));
    for (const text of texts) expect(text.length).toBeLessThan(4_000);
    // The facts the README's quick start asks about live in exactly one file each.
    for (const fact of ["36-month", "45 days", "Desert Freight depot", "62 miles per hour"])
      expect(texts.filter((text) => text.includes(fact))).toHaveLength(1);
  });
});
