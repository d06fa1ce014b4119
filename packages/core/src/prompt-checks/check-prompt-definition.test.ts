import { describe, expect, test } from "bun:test";
import type { InputDeclaration, PromptMessage, ToolDefinition } from "@promptrun/contract";
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

type Definition = Parameters<typeof checkPromptDefinition>[0];
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

describe("checkPromptDefinition: tools", () => {
  const parameters = (...names: string[]) => ({
    type: "object",
    properties: Object.fromEntries(names.map((name) => [name, { type: "string" }])),
    required: names,
  });
  const lookupOrder: ToolDefinition = {
    type: "function",
    name: "lookup_order",
    description: "Look an order up by its number.",
    parameters: parameters("number"),
  };
  const getWeather = (request: Partial<Extract<ToolDefinition, { type: "http" }>["request"]> = {}) =>
    ({
      type: "http",
      name: "get_weather",
      parameters: parameters("city"),
      request: {
        method: "GET",
        url: "https://api.example.com/weather?city={{args.city}}&q={{question}}",
        headers: { Authorization: "Bearer {{env.WEATHER_KEY}}" },
        ...request,
      },
    }) satisfies ToolDefinition;
  const mcp = (
    server: Partial<Extract<ToolDefinition, { type: "mcp" }>["server"]> = {},
    allowedTools = ["search_docs"],
  ) =>
    ({
      type: "mcp",
      server: {
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: "Bearer {{env.MCP_TOKEN}}" },
        ...server,
      },
      allowedTools,
    }) satisfies ToolDefinition;
  const withTools = (tools: ToolDefinition[], extra: Partial<Definition> = {}) =>
    errorOf({ ...supportAgent, tools, ...extra });

  test("the design's three kinds of tool pass, with toolChoice, maxSteps and toolTimeoutSeconds", () => {
    expect(
      withTools([lookupOrder, getWeather(), mcp()], {
        toolChoice: { name: "search_docs" },
        maxSteps: 8,
        toolTimeoutSeconds: 600,
      }),
    ).toBe("no error");
    expect(withTools([lookupOrder], { toolChoice: "required" })).toBe("no error");
    expect(withTools([], {})).toBe("no error");
  });

  test("tool names are unique across function, http and mcp allowedTools", () => {
    expect(withTools([lookupOrder, getWeather(), { ...lookupOrder, description: "again" }])).toBe(
      "invalid: tools[2].name: duplicate tool name 'lookup_order'",
    );
    expect(withTools([getWeather(), mcp({}, ["search_docs", "get_weather"])])).toBe(
      "invalid: tools[1].allowedTools[1]: duplicate tool name 'get_weather'",
    );
    expect(withTools([mcp(), mcp({ url: "https://other.example.com/mcp" })])).toBe(
      "invalid: tools[1].allowedTools[0]: duplicate tool name 'search_docs'",
    );
  });

  test("parameters must compile as draft 2020-12", () => {
    expect(
      withTools([lookupOrder, { ...lookupOrder, name: "b", parameters: { type: "object", requried: [] } }]),
    ).toBe(
      'invalid: tools[1].parameters: does not compile as JSON Schema (draft 2020-12): strict mode: unknown keyword: "requried"',
    );
    expect(withTools([{ ...lookupOrder, parameters: { type: "objekt" } }])).toStartWith(
      "invalid: tools[0].parameters: not a valid JSON Schema (draft 2020-12) at /type:",
    );
    expect(
      withTools([
        getWeather(),
        { ...getWeather(), name: "w2", parameters: { type: "object", properties: 3 } },
      ]),
    ).toStartWith("invalid: tools[1].parameters: not a valid JSON Schema (draft 2020-12) at /properties:");
  });

  test("parameters must be an object schema", () => {
    expect(withTools([{ ...lookupOrder, parameters: { type: "string" } }])).toBe(
      "invalid: tools[0].parameters: must be an object schema (type: object): providers take tool arguments as an object",
    );
    expect(withTools([getWeather(), { ...lookupOrder, parameters: {} }])).toBe(
      "invalid: tools[1].parameters: must be an object schema (type: object): providers take tool arguments as an object",
    );
  });

  test("an http template names only declared inputs, env.NAME and args of its parameters", () => {
    expect(withTools([getWeather({ url: "https://api.example.com/w?city={{town}}" })])).toBe(
      "invalid: tools[0].request.url: template names undeclared input: town",
    );
    expect(withTools([getWeather({ url: "https://api.example.com/w?city={{args.town}}" })])).toBe(
      "invalid: tools[0].request.url: {{args.town}}: 'town' is not a top-level parameter of tool 'get_weather' (parameters: city)",
    );
    expect(
      withTools([
        lookupOrder,
        getWeather({ headers: { "X-Key": "{{env.KEY}} {{ args.city }} {{secret}}" } }),
      ]),
    ).toBe("invalid: tools[1].request.headers.X-Key: template names undeclared input: secret");
    expect(
      withTools([getWeather({ method: "POST", body: '{"city": "{{args.city}}", "n": {{args.count}}}' })]),
    ).toBe(
      "invalid: tools[0].request.body: {{args.count}}: 'count' is not a top-level parameter of tool 'get_weather' (parameters: city)",
    );
    expect(withTools([getWeather({ body: "{{args.city.name}}" })])).toBe(
      "invalid: tools[0].request.body: '{{args.city.name}}' is not a placeholder (use {{input}}, {{env.NAME}} or {{args.NAME}})",
    );
    expect(withTools([getWeather({ body: '{"a":{"b":1}}' })])).toBe("no error");
  });

  test("an mcp server's url and headers name only declared inputs and env.NAME, never args", () => {
    expect(withTools([mcp({ url: "https://{{env.MCP_HOST}}/mcp?user={{question}}" })])).toBe("no error");
    expect(withTools([mcp({ url: "https://mcp.example.com/{{tenant}}" })])).toBe(
      "invalid: tools[0].server.url: template names undeclared input: tenant",
    );
    expect(withTools([lookupOrder, mcp({ headers: { Authorization: "Bearer {{args.token}}" } })])).toBe(
      "invalid: tools[1].server.headers.Authorization: {{args.token}}: only http tools can use args",
    );
  });

  test("a url template must produce an http(s) URL: a literal scheme prefix", () => {
    const scheme = "must start with http:// or https:// (a placeholder cannot supply the scheme)";
    expect(withTools([getWeather({ url: "{{env.WEATHER_URL}}/now" })])).toBe(
      `invalid: tools[0].request.url: ${scheme}`,
    );
    expect(withTools([getWeather({ url: "ftp://api.example.com/{{args.city}}" })])).toBe(
      `invalid: tools[0].request.url: ${scheme}`,
    );
    expect(withTools([mcp({ url: "file:///etc/passwd" })])).toBe(`invalid: tools[0].server.url: ${scheme}`);
    expect(withTools([getWeather({ url: "https://exa mple.com/{{args.city}}" })])).toBe(
      "invalid: tools[0].request.url: is not a URL (with its placeholders filled)",
    );
    expect(withTools([getWeather({ url: "HTTP://{{env.WEATHER_HOST}}:8080/now?c={{args.city}}" })])).toBe(
      "no error",
    );
  });

  test("toolChoice.name must name a function or http tool or an mcp allowedTools entry", () => {
    expect(withTools([lookupOrder, getWeather(), mcp()], { toolChoice: { name: "get_weather" } })).toBe(
      "no error",
    );
    expect(withTools([lookupOrder, mcp()], { toolChoice: { name: "lookup" } })).toBe(
      "invalid: toolChoice.name: 'lookup' is not a tool of this prompt (tools: lookup_order, search_docs)",
    );
    // An mcp server without allowedTools offers tools known only at run time.
    expect(
      withTools([lookupOrder, { type: "mcp", server: { url: "https://mcp.example.com/mcp" } }], {
        toolChoice: { name: "anything" },
      }),
    ).toBe("no error");
  });

  test("toolChoice, maxSteps and toolTimeoutSeconds need tools", () => {
    expect(errorOf({ ...supportAgent, toolChoice: "auto" })).toBe(
      "invalid: toolChoice: the prompt has no tools",
    );
    expect(errorOf({ ...supportAgent, tools: [], maxSteps: 3 })).toBe(
      "invalid: maxSteps: the prompt has no tools",
    );
    expect(errorOf({ ...supportAgent, toolTimeoutSeconds: 60 })).toBe(
      "invalid: toolTimeoutSeconds: the prompt has no tools",
    );
  });
});
