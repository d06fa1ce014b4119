import { describe, expect, test } from "bun:test";
import type { InputDeclaration, PromptMessage, ToolDefinition } from "@promptrun/contract";
import { PromptrunError } from "../errors.ts";
import { createTestConfig } from "../testing/test-config.ts";
import { knowledgeBaseToolName } from "../tools/knowledge-base-tool.ts";
import { checkPromptDefinition } from "./check-prompt-definition.ts";

const providers = createTestConfig({ providers: { openai: {}, anthropic: {}, compatible: [] } });

type Definition = Parameters<typeof checkPromptDefinition>[0];
const inputs: Record<string, InputDeclaration> = {
  question: { type: "string" },
  photo: { type: "image", optional: true },
};
const ask: PromptMessage[] = [
  { role: "system", content: "Answer from the sources, citing them as [n]." },
  { role: "user", content: "Sources:\n{{retrieval}}\n\nQuestion: {{question}}" },
];
const rag = (extra: Partial<Definition> = {}): Definition => ({
  inputs,
  messages: ask,
  retrieval: { knowledgeBase: "docs", query: "{{question}}" },
  ...extra,
});

const errorOf = (checked: Definition): string => {
  try {
    checkPromptDefinition(checked, providers);
    return "no error";
  } catch (error) {
    return PromptrunError.isInstance(error) ? `${error.code}: ${error.message}` : `other: ${error}`;
  }
};

describe("push-time checks of retrieval:", () => {
  test("a prompt with retrieval: and {{retrieval}} in a message (string or text part) passes; the knowledge base need not exist", () => {
    expect(errorOf(rag())).toBe("no error");
    const parts: PromptMessage[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "{{ retrieval }}" },
          { type: "image", image: "{{photo}}" },
        ],
      },
    ];
    expect(
      errorOf(rag({ messages: parts, retrieval: { knowledgeBase: "nowhere", query: "fixed words" } })),
    ).toBe("no error");
  });

  test("{{retrieval}} without retrieval: is refused, naming the path", () => {
    expect(errorOf(rag({ retrieval: undefined }))).toBe(
      `invalid: messages[1].content: {{retrieval}} needs the prompt's retrieval: (e.g. retrieval: {knowledgeBase: docs, query: "{{question}}"}), or an input named retrieval`,
    );
    const parts: PromptMessage[] = [
      { role: "user", content: [{ type: "text", text: "{{question}} {{retrieval}}" }] },
    ];
    expect(errorOf(rag({ messages: parts, retrieval: undefined }))).toStartWith(
      "invalid: messages[0].content[0].text: {{retrieval}} needs the prompt's retrieval:",
    );
    // An input named retrieval is an ordinary input when the prompt has no retrieval:.
    const own = { ...inputs, retrieval: { type: "string" as const } };
    expect(errorOf(rag({ inputs: own, retrieval: undefined }))).toBe("no error");
  });

  test("retrieval.query names declared text inputs only, never env vars", () => {
    expect(errorOf(rag({ retrieval: { knowledgeBase: "docs", query: "{{topic}}" } }))).toBe(
      "invalid: retrieval.query: template names undeclared input: topic",
    );
    expect(errorOf(rag({ retrieval: { knowledgeBase: "docs", query: "{{question}} {{env.SECRET}}" } }))).toBe(
      "invalid: retrieval.query: {{env.SECRET}} cannot be part of a search query; name declared inputs only",
    );
    expect(errorOf(rag({ retrieval: { knowledgeBase: "docs", query: "{{photo}}" } }))).toBe(
      "invalid: retrieval.query: image input 'photo' cannot be searched for; use a text input",
    );
    expect(errorOf(rag({ retrieval: { knowledgeBase: "docs", query: "{{retrieval}}" } }))).toBe(
      "invalid: retrieval.query: template names undeclared input: retrieval",
    );
  });

  test("with retrieval:, no input may be named retrieval, and a message must use {{retrieval}}", () => {
    const own = { ...inputs, retrieval: { type: "string" as const } };
    expect(errorOf(rag({ inputs: own }))).toBe(
      "invalid: inputs.retrieval: with retrieval: set, {{retrieval}} stands for the retrieved chunks; rename this input",
    );
    const unused: PromptMessage[] = [{ role: "user", content: "{{question}}" }];
    expect(errorOf(rag({ messages: unused }))).toBe(
      "invalid: retrieval: no message uses {{retrieval}}, so the model would never see the retrieved chunks; add {{retrieval}} to a message",
    );
  });
});

describe("push-time checks of knowledge_base tools", () => {
  const question: PromptMessage[] = [{ role: "user", content: "{{question}}" }];
  const withTools = (tools: ToolDefinition[], extra: Partial<Definition> = {}): Definition => ({
    inputs,
    messages: question,
    tools,
    ...extra,
  });
  const lookup: ToolDefinition = {
    type: "function",
    name: "search_docs",
    parameters: { type: "object", properties: {} },
  };

  test("the model-facing name is name, else search_<slug> with other characters as _, cut to 64", () => {
    expect(knowledgeBaseToolName({ knowledgeBase: "docs" })).toBe("search_docs");
    expect(knowledgeBaseToolName({ knowledgeBase: "help.center_v2" })).toBe("search_help_center_v2");
    expect(knowledgeBaseToolName({ knowledgeBase: "x".repeat(100) })).toHaveLength(64);
    expect(knowledgeBaseToolName({ knowledgeBase: "docs", name: "manuals" })).toBe("manuals");
  });

  test("a knowledge_base tool passes (with toolChoice naming it); its name must not collide with another tool's", () => {
    const kb: ToolDefinition = { type: "knowledge_base", knowledgeBase: "docs", topK: 3 };
    expect(errorOf(withTools([kb], { toolChoice: { name: "search_docs" }, maxSteps: 3 }))).toBe("no error");
    expect(errorOf(withTools([lookup, kb]))).toBe(
      "invalid: tools[1].knowledgeBase: duplicate tool name 'search_docs' (a knowledge_base tool is named search_<slug> unless it sets name; set a name)",
    );
    expect(errorOf(withTools([lookup, { ...kb, name: "search_docs" }]))).toBe(
      "invalid: tools[1].name: duplicate tool name 'search_docs'",
    );
    expect(errorOf(withTools([lookup, { ...kb, name: "docs_lookup" }]))).toBe("no error");
    expect(errorOf(withTools([kb, { type: "knowledge_base", knowledgeBase: "docs" }]))).toStartWith(
      "invalid: tools[1].knowledgeBase: duplicate tool name 'search_docs'",
    );
  });
});
