import { describe, expect, test } from "bun:test";
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
