import { describe, expect, test } from "bun:test";
import type { InputDeclaration, PromptDefinition, PromptMessage } from "@promptrun/contract";
import { PromptrunError } from "../errors.ts";
import { createTestConfig } from "../testing/test-config.ts";
import { checkPromptDefinition } from "./check-prompt-definition.ts";

const providers = createTestConfig({
  providers: { openai: {}, anthropic: {}, compatible: [{ name: "ollama", baseUrl: "http://127.0.0.1:1" }] },
});

const inputs: Record<string, InputDeclaration> = {
  question: { type: "string" },
  screenshot: { type: "image", optional: true },
  contract: { type: "file", optional: true },
  history: { type: "messages", optional: true },
};

type Definition = Pick<PromptDefinition, "messages" | "inputs" | "output" | "providerOptions">;
const definition = (messages: PromptMessage[], extra: Partial<Definition> = {}): Definition => ({
  inputs,
  messages,
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

const supportAgent = definition(
  [
    { role: "system", content: "You help customers of {{env.COMPANY}}." },
    { role: "user", content: "{{history}}" },
    {
      role: "user",
      content: [
        { type: "text", text: "{{question}}" },
        { type: "image", image: "{{screenshot}}", mediaType: "image/png" },
        { type: "file", file: "{{ contract }}", mediaType: "application/pdf", filename: "c.pdf" },
      ],
    },
  ],
  {
    output: {
      format: "json_schema",
      name: "answer",
      strict: true,
      schema: {
        type: "object",
        properties: { reply: { type: "string" }, escalate: { type: "boolean" } },
        required: ["reply", "escalate"],
        additionalProperties: false,
      },
    },
    providerOptions: { openai: { promptCacheKey: "support" }, anthropic: {}, ollama: {} },
  },
);

describe("checkPromptDefinition", () => {
  test("the design's support-agent prompt passes", () => {
    expect(errorOf(supportAgent)).toBe("no error");
  });

  test("an output schema that does not compile names output.schema", () => {
    expect(
      errorOf({ ...supportAgent, output: { format: "json_schema", schema: { type: "nonsense" } } }),
    ).toBe(
      `invalid: output.schema: not a valid JSON Schema (draft 2020-12) at /type: must be equal to one of the allowed values (["array","boolean","integer","null","number","object","string"])`,
    );
    expect(errorOf({ ...supportAgent, output: { format: "text" } })).toBe("no error");
  });

  test("providerOptions keys must be known providers", () => {
    expect(errorOf({ ...supportAgent, providerOptions: { opneai: {} } })).toBe(
      "invalid: providerOptions.opneai: unknown provider 'opneai' (known: openai, anthropic, dev, ollama)",
    );
  });

  test("undeclared inputs are named with the path of the template", () => {
    expect(errorOf(definition([{ role: "user", content: "{{question}} {{tone}} {{env.X}}" }]))).toBe(
      "invalid: messages[0].content: template names undeclared input: tone",
    );
    expect(
      errorOf(
        definition([
          { role: "user", content: "hi" },
          { role: "user", content: [{ type: "text", text: "{{a}} {{b}} {{a}}" }] },
        ]),
      ),
    ).toBe("invalid: messages[1].content[0].text: template names undeclared inputs: a, b");
  });

  test("an image part must name exactly one image input; a file part a file input", () => {
    const part = (content: PromptMessage["content"]) =>
      errorOf(
        definition([
          { role: "system", content: "s" },
          { role: "user", content: "u" },
          { role: "user", content },
        ]),
      );
    expect(
      part([
        { type: "text", text: "x" },
        { type: "image", image: "{{question}}" },
      ]),
    ).toBe(
      "invalid: messages[2].content[1].image: input 'question' is of type string; an image part needs an image input",
    );
    expect(part([{ type: "file", file: "{{screenshot}}" }])).toBe(
      "invalid: messages[2].content[0].file: input 'screenshot' is of type image; a file part needs a file input",
    );
    expect(part([{ type: "image", image: "{{screenshot}} {{screenshot}}" }])).toBe(
      'invalid: messages[2].content[0].image: must be "{{name}}" of one image input',
    );
    expect(part([{ type: "image", image: "https://example.com/x.png" }])).toBe(
      'invalid: messages[2].content[0].image: must be "{{name}}" of one image input',
    );
    expect(part([{ type: "image", image: "{{env.IMAGE}}" }])).toBe(
      'invalid: messages[2].content[0].image: must be "{{name}}" of one image input',
    );
    expect(part([{ type: "image", image: "{{photo}}" }])).toBe(
      "invalid: messages[2].content[0].image: template names undeclared input: photo",
    );
    expect(part([{ type: "image", image: "{{constructor}}" }])).toBe(
      "invalid: messages[2].content[0].image: template names undeclared input: constructor",
    );
    expect(part([{ type: "image", image: "{{screenshot}}", mediaType: "application/pdf" }])).toBe(
      "invalid: messages[2].content[0].mediaType: 'application/pdf' is not an image/* media type",
    );
    expect(part([{ type: "file", file: "{{contract}}", mediaType: "pdf" }])).toBe(
      "invalid: messages[2].content[0].mediaType: 'pdf' is not a media type (type/subtype)",
    );
  });

  test("image and file inputs never appear in text", () => {
    expect(errorOf(definition([{ role: "user", content: "look: {{screenshot}}" }]))).toBe(
      "invalid: messages[0].content: image input 'screenshot' can only fill an image part ({type: image, image: \"{{screenshot}}\"}), not text",
    );
    expect(
      errorOf(definition([{ role: "user", content: [{ type: "text", text: "{{contract}}" }] }])),
    ).toContain("invalid: messages[0].content[0].text: file input 'contract' can only fill a file part");
  });

  test("a messages input only as the whole content of a user or assistant message", () => {
    expect(errorOf(definition([{ role: "assistant", content: " {{ history }} " }]))).toBe("no error");
    expect(errorOf(definition([{ role: "system", content: "{{history}}" }]))).toBe(
      "invalid: messages[0].role: messages input 'history' can only stand for user or assistant messages, not system",
    );
    expect(errorOf(definition([{ role: "user", content: "Earlier: {{history}}" }]))).toBe(
      "invalid: messages[0].content: messages input 'history' can only be the whole content of a user or assistant message (\"{{history}}\")",
    );
    expect(
      errorOf(definition([{ role: "user", content: [{ type: "text", text: "{{history}}" }] }])),
    ).toContain(
      "invalid: messages[0].content[0].text: messages input 'history' can only be the whole content",
    );
    expect(errorOf(definition([{ role: "user", content: [{ type: "image", image: "{{history}}" }] }]))).toBe(
      "invalid: messages[0].content[0].image: input 'history' is of type messages; an image part needs an image input",
    );
  });
});
