import { describe, expect, test } from "bun:test";
import type { KnowledgeStore } from "../knowledge/ports.ts";
import { rejection } from "../testing/rejection.ts";
import { createServiceFixture } from "../testing/service-fixture.ts";

const ragPrompt = {
  slug: "ask-docs",
  model: "dev:echo",
  inputs: { question: { type: "string" } },
  retrieval: { knowledgeBase: "docs", query: "{{question}}" },
  messages: [
    { role: "system", content: "Answer from the sources; cite them as [n]." },
    { role: "user", content: "Sources:\n{{retrieval}}\n\nQuestion: {{question}}" },
  ],
  tools: [{ type: "knowledge_base", knowledgeBase: "docs" }],
  tags: ["production"],
} as const;

describe("retrieval in push and render", () => {
  test("render searches nothing: {{retrieval}} shows the knowledge base and query; the tool as offered", async () => {
    const fixture = createServiceFixture();
    const { tenant } = await fixture.createTenant("A");
    await fixture.services.prompts.push(tenant.id, [ragPrompt]);
    const rendered = await fixture.services.runs.render(tenant.id, "ask-docs", "production", {
      inputs: { question: 'what is "net 30"?' },
    });
    expect(rendered.messages.at(-1)).toEqual({
      role: "user",
      content: `Sources:\n[retrieval: knowledge base 'docs', query "what is \\"net 30\\"?"]\n\nQuestion: what is "net 30"?`,
    });
    expect(rendered.tools).toEqual([
      {
        type: "knowledge_base",
        name: "search_docs",
        knowledgeBase: "docs",
        description:
          "Searches the knowledge base 'docs' and returns the matching passages, each as [n] <filename>: <text>. Cite a passage you use as [n].",
        parameters: {
          type: "object",
          properties: {
            query: { type: "string", description: "What to search for, in a few words or a question." },
          },
          required: ["query"],
        },
      },
    ]);
  });

  test("push refuses {{retrieval}} without retrieval:, naming the prompt and the path", async () => {
    const fixture = createServiceFixture();
    const { tenant } = await fixture.createTenant("A");
    const { retrieval: _dropped, tools: _tools, ...plain } = ragPrompt;
    const error = await rejection(fixture.services.prompts.push(tenant.id, [plain]));
    expect(error.code).toBe("invalid");
    expect(error.message).toStartWith(
      "prompt 'ask-docs': messages[1].content: {{retrieval}} needs the prompt's retrieval:",
    );
  });
});

describe("a run's messages read back", () => {
  test("{{retrieval}} is the run's stored search with its chunk texts read again; before the search, the preview", async () => {
    const fixture = createServiceFixture();
    const { tenant } = await fixture.createTenant("A");
    await fixture.services.prompts.push(tenant.id, [ragPrompt]);
    const kbId = crypto.randomUUID();
    const [kept, gone, documentId] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    // The knowledge store as far as this read uses it (the in-memory KnowledgeStore is another part).
    const knowledge: Pick<KnowledgeStore, "getKnowledgeBase" | "getChunks"> = {
      getKnowledgeBase: async (tenantId, slug) =>
        tenantId === tenant.id && slug === "docs"
          ? ({ id: kbId } as Awaited<ReturnType<KnowledgeStore["getKnowledgeBase"]>>)
          : null,
      getChunks: async (id, ids) =>
        id === kbId && ids.includes(kept)
          ? [{ chunkId: kept, documentId, filename: "refunds.md", text: "Five working days.", metadata: {} }]
          : [],
    };
    Object.assign(fixture.store, { knowledge });

    const { id } = await fixture.services.runs.create(tenant, "ask-docs", "production", {
      inputs: { question: "refunds?" },
    });
    const before = await fixture.services.runs.messages(tenant.id, id);
    expect(before.messages.at(-1)!.content).toBe(
      `Sources:\n[retrieval: knowledge base 'docs', query "refunds?"]\n\nQuestion: refunds?`,
    );

    const chunks = [
      { n: 1, chunkId: kept, documentId, filename: "refunds.md", score: 0.9 },
      { n: 2, chunkId: gone, documentId, filename: "old.md", score: 0.4 },
    ];
    expect(
      await fixture.store.runs.saveSteps(id, [], [{ knowledgeBase: "docs", query: "refunds?", chunks }]),
    ).toBe(true);
    const after = await fixture.services.runs.messages(tenant.id, id);
    expect(after.messages.at(-1)!.content).toBe(
      "Sources:\n[1] refunds.md: Five working days.\n\n[2] old.md: (this chunk no longer exists)\n\nQuestion: refunds?",
    );
  });
});
