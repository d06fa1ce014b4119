import { describe, expect, test } from "bun:test";
import { rejection } from "../testing/rejection.ts";
import { createServiceFixture, greetPrompt } from "../testing/service-fixture.ts";
import { parseVersionSegment } from "./parse-version-segment.ts";

describe("parseVersionSegment", () => {
  test("UUID → id, digits → number, latest, anything else → tag", () => {
    expect(parseVersionSegment("0190F1F0-0000-7000-8000-0000000000AA")).toEqual({
      kind: "id",
      id: "0190f1f0-0000-7000-8000-0000000000aa",
    });
    expect(parseVersionSegment("12")).toEqual({ kind: "number", version: 12 });
    expect(parseVersionSegment("latest")).toEqual({ kind: "latest" });
    expect(parseVersionSegment("012")).toEqual({ kind: "tag", tag: "012" });
    expect(parseVersionSegment("0")).toEqual({ kind: "tag", tag: "0" });
    expect(parseVersionSegment("Latest")).toEqual({ kind: "tag", tag: "Latest" });
  });
});

describe("PromptService.push", () => {
  test("new → version 1; identical → same version, created=false; changed → version 2", async () => {
    const { services, createTenant } = createServiceFixture();
    const { tenant } = await createTenant();
    const [first] = await services.prompts.push(tenant.id, [greetPrompt]);
    expect(first).toMatchObject({ slug: "greet", version: 1, tags: ["production"], created: true });
    // Key order and spelled-out defaults do not change the content.
    const reordered = {
      tags: ["production"],
      messages: greetPrompt.messages,
      inputs: { tone: { default: "friendly", type: "string" }, name: {} },
      model: "dev:echo",
      params: {},
      slug: "greet",
    };
    const [same] = await services.prompts.push(tenant.id, [reordered]);
    expect(same).toEqual({ ...first!, created: false });
    const [changed] = await services.prompts.push(tenant.id, [
      { ...greetPrompt, params: { temperature: 0.2 } },
    ]);
    expect(changed).toMatchObject({ version: 2, created: true, tags: ["production"] });
    expect(changed!.id).not.toBe(first!.id);
    expect((await services.prompts.get(tenant.id, "greet", "1")).tags).toEqual([]);
  });

  test("rejects a template naming an undeclared input", async () => {
    const { services, createTenant } = createServiceFixture();
    const { tenant } = await createTenant();
    const error = await rejection(
      services.prompts.push(tenant.id, [{ ...greetPrompt, inputs: { name: { type: "string" } } }]),
    );
    expect([error.code, error.message]).toEqual([
      "invalid",
      "prompt 'greet': messages[0].content: template names undeclared input: tone",
    ]);
  });

  test("invalid files name the prompt and the field; nothing is pushed", async () => {
    const { services, createTenant, store } = createServiceFixture();
    const { tenant } = await createTenant();
    const badRole = { ...greetPrompt, slug: "other", messages: [{ role: "bot", content: "x" }] };
    const error = await rejection(services.prompts.push(tenant.id, [greetPrompt, badRole]));
    expect(error.message).toBe(
      `prompt 'other': messages[0].role: expected one of "system"|"user"|"assistant"`,
    );
    expect(await store.prompts.getPrompt(tenant.id, "greet")).toBeNull();

    expect((await rejection(services.prompts.push(tenant.id, [{ model: "dev:echo" }]))).message).toBe(
      "prompt '#1': slug: required; messages: required",
    );
    expect((await rejection(services.prompts.push(tenant.id, [{ ...greetPrompt, extra: 1 }]))).message).toBe(
      "prompt 'greet': unknown field 'extra'",
    );
    expect((await rejection(services.prompts.push(tenant.id, ["not an object"]))).message).toBe(
      "prompt '#1': prompt file must be a JSON object",
    );
    const badDefault = {
      ...greetPrompt,
      inputs: { ...greetPrompt.inputs, count: { type: "integer", default: "x" } },
    };
    expect((await rejection(services.prompts.push(tenant.id, [badDefault]))).message).toBe(
      "prompt 'greet': default of inputs.count must be an integer",
    );
    expect((await rejection(services.prompts.push(tenant.id, [greetPrompt, greetPrompt]))).message).toBe(
      "prompt 'greet' appears more than once in one push",
    );
    expect((await rejection(services.prompts.push(tenant.id, []))).code).toBe("invalid");
  });
});

describe("PromptService.push: prompts that return data and read files", () => {
  const agent = {
    slug: "agent",
    model: "openai:o4-mini",
    params: { reasoning: { effort: "low" } },
    inputs: {
      question: {},
      screenshot: { type: "image", optional: true },
      history: { type: "messages", optional: true },
    },
    messages: [
      { role: "user", content: "{{history}}" },
      {
        role: "user",
        content: [
          { type: "text", text: "{{question}}" },
          { type: "image", image: "{{screenshot}}" },
        ],
      },
    ],
    output: { format: "json_schema", schema: { type: "object", properties: { reply: { type: "string" } } } },
    providerOptions: { openai: { promptCacheKey: "agent" } },
  };

  test("a prompt with parts, reasoning, an output schema and provider options is pushed and read back", async () => {
    const { services, createTenant } = createServiceFixture();
    const { tenant } = await createTenant();
    const [pushed] = await services.prompts.push(tenant.id, [agent]);
    expect(pushed).toMatchObject({ version: 1, created: true });
    const version = await services.prompts.get(tenant.id, "agent", "1");
    expect(version).toMatchObject({
      params: agent.params,
      messages: agent.messages,
      output: agent.output,
      providerOptions: agent.providerOptions,
      memory: null,
    });
  });

  test("refused with the prompt and the path: output schema, image part, providerOptions, zod paths", async () => {
    const { services, createTenant, store } = createServiceFixture();
    const { tenant } = await createTenant();
    const messageOf = async (file: unknown) =>
      (await rejection(services.prompts.push(tenant.id, [file]))).message;
    expect(
      await messageOf({ ...agent, output: { format: "json_schema", schema: { type: "nonsense" } } }),
    ).toBe(
      `prompt 'agent': output.schema: not a valid JSON Schema (draft 2020-12) at /type: must be equal to one of the allowed values (["array","boolean","integer","null","number","object","string"])`,
    );
    const stringImage = {
      ...agent,
      messages: [agent.messages[0], { role: "user", content: [{ type: "image", image: "{{question}}" }] }],
    };
    expect(await messageOf(stringImage)).toBe(
      "prompt 'agent': messages[1].content[0].image: input 'question' is of type string; an image part needs an image input",
    );
    expect(await messageOf({ ...agent, providerOptions: { azure: {} } })).toStartWith(
      "prompt 'agent': providerOptions.azure: unknown provider 'azure' (known: openai, anthropic, dev",
    );
    expect(await messageOf({ ...agent, params: { reasoning: { effort: "max" } } })).toBe(
      `prompt 'agent': params.reasoning.effort: expected one of "minimal"|"low"|"medium"|"high"`,
    );
    expect(
      await messageOf({
        ...agent,
        messages: [agent.messages[0], { role: "user", content: [{ type: "audio" }] }],
      }),
    ).toBe(`prompt 'agent': messages[1].content[0].type: expected one of "text"|"image"|"file"`);
    expect(
      await messageOf({
        ...agent,
        inputs: { ...agent.inputs, screenshot: { type: "image", default: "file:///etc/passwd" } },
      }),
    ).toBe("prompt 'agent': default of inputs.screenshot must be an https URL or a base64 data: URL");
    expect(await store.prompts.getPrompt(tenant.id, "agent")).toBeNull();
  });

  test("an old prompt file keeps its content hash: nothing new is added to what is stored", async () => {
    const { services, createTenant, store } = createServiceFixture();
    const { tenant } = await createTenant();
    // A prompt file of the kind pushed before these fields existed. Its hash was computed with
    // the contract of that release (commit 2e0f088): a changed hash would make every re-push of
    // an unchanged old file a new version.
    const oldFile = {
      slug: "summarize",
      description: "Summaries",
      model: "openai:gpt-4o-mini",
      params: { temperature: 0.3, maxOutputTokens: 200, custom: { a: 1 } },
      inputs: {
        text: {},
        style: { type: "string", default: "short", description: "how" },
        n: { type: "integer", optional: true },
      },
      messages: [
        { role: "system", content: "Summarize {{style}}." },
        { role: "user", content: "{{text}} ({{n}}) {{env.X}}" },
      ],
      tags: ["production"],
    };
    await services.prompts.push(tenant.id, [oldFile]);
    const stored = await store.prompts.resolveVersion(tenant.id, "summarize", { kind: "latest" });
    expect(stored!.contentHash).toBe("97c250f4e13e2174253458845ab47e1bc623825bc0ce128c2e6c60a66053a1a2");
    expect(Object.keys(stored!.definition).sort()).toEqual([
      "description",
      "inputs",
      "messages",
      "model",
      "params",
    ]);
    const [again] = await services.prompts.push(tenant.id, [oldFile]);
    expect(again).toMatchObject({ version: 1, created: false });
  });
});

describe("PromptService version resolution", () => {
  const setup = async () => {
    const fixture = createServiceFixture();
    const { tenant } = await fixture.createTenant("A");
    const { tenant: other } = await fixture.createTenant("B");
    const [v1] = await fixture.services.prompts.push(tenant.id, [{ ...greetPrompt, tags: ["stable"] }]);
    const [v2] = await fixture.services.prompts.push(tenant.id, [
      { ...greetPrompt, description: "v2", tags: [] },
    ]);
    const [foreign] = await fixture.services.prompts.push(other.id, [greetPrompt]);
    return { ...fixture, tenant, v1: v1!, v2: v2!, foreign: foreign! };
  };

  test("id, number, latest and tag resolve", async () => {
    const { services, tenant, v1, v2 } = await setup();
    const byId = await services.prompts.get(tenant.id, "greet", v1.id);
    expect(byId).toMatchObject({ id: v1.id, version: 1, tags: ["stable"], description: null });
    expect(byId.inputs).toEqual({ name: { type: "string" }, tone: { type: "string", default: "friendly" } });
    expect((await services.prompts.get(tenant.id, "greet", "2")).id).toBe(v2.id);
    expect((await services.prompts.get(tenant.id, "greet", "latest")).description).toBe("v2");
    expect((await services.prompts.get(tenant.id, "greet", "stable")).version).toBe(1);
  });

  test("unknown slug, number, tag, and another tenant's version id are not_found with clear messages", async () => {
    const { services, tenant, foreign } = await setup();
    const cases: Array<[string, string, string]> = [
      ["nope", "latest", "prompt 'nope' not found"],
      ["greet", "3", "prompt 'greet' has no version 3"],
      ["greet", "no-such-tag", "prompt 'greet' has no version or tag 'no-such-tag'"],
      ["greet", "Stable", "prompt 'greet' has no version or tag 'Stable'"],
      ["greet", foreign.id, `prompt 'greet' has no version with id '${foreign.id}'`],
    ];
    for (const [slug, segment, message] of cases) {
      const error = await rejection(services.prompts.get(tenant.id, slug, segment));
      expect([segment, error.code, error.message]).toEqual([segment, "not_found", message]);
    }
  });

  test("tag moves a tag; list and versions page through the prompts", async () => {
    const { services, tenant, v1 } = await setup();
    expect(await services.prompts.tag(tenant.id, "greet", "1", "beta")).toEqual({
      slug: "greet",
      version: 1,
      id: v1.id,
      tags: ["beta", "stable"],
      created: false,
    });
    expect((await rejection(services.prompts.tag(tenant.id, "greet", "1", "latest"))).code).toBe("invalid");
    expect((await rejection(services.prompts.tag(tenant.id, "greet", "9", "beta"))).code).toBe("not_found");

    await services.prompts.push(tenant.id, [{ ...greetPrompt, slug: "another", tags: [] }]);
    const list = await services.prompts.list(tenant.id, { limit: 1 });
    expect(list.items.map((prompt) => prompt.slug)).toEqual(["another"]);
    const rest = await services.prompts.list(tenant.id, { limit: 1, cursor: list.nextCursor });
    expect(rest.items[0]).toMatchObject({
      slug: "greet",
      latestVersion: 2,
      tags: { beta: 1, stable: 1 },
    });
    expect(rest.nextCursor).toBeNull();

    const versions = await services.prompts.versions(tenant.id, "greet", { limit: 10 });
    expect(versions.items.map((version) => [version.version, version.tags])).toEqual([
      [2, []],
      [1, ["beta", "stable"]],
    ]);
    expect((await rejection(services.prompts.versions(tenant.id, "nope", { limit: 10 }))).code).toBe(
      "not_found",
    );
  });
});

describe("PromptService.push: model providers", () => {
  test("an unknown provider is rejected at push, naming the known ones; nothing is pushed", async () => {
    const { services, createTenant, store } = createServiceFixture({
      providers: {
        openai: {},
        anthropic: {},
        compatible: [{ name: "ollama", baseUrl: "http://127.0.0.1:11434/v1" }],
      },
    });
    const { tenant } = await createTenant();
    const error = await rejection(
      services.prompts.push(tenant.id, [greetPrompt, { ...greetPrompt, slug: "other", model: "foo:bar" }]),
    );
    expect(error.code).toBe("invalid");
    expect(error.message).toBe(
      "prompt 'other': unknown model provider 'foo' (known: openai, anthropic, dev, ollama)",
    );
    expect(await store.prompts.getPrompt(tenant.id, "greet")).toBeNull();
    expect(
      (await rejection(services.prompts.push(tenant.id, [{ ...greetPrompt, model: "dev:parrot" }]))).message,
    ).toBe("prompt 'greet': unknown dev model 'parrot' (dev:echo is the built-in one)");
    for (const model of [
      "openai:gpt-4o-mini",
      "anthropic:claude-haiku-4-5",
      "ollama:llama3.2:1b",
      "dev:echo",
    ]) {
      const [pushed] = await services.prompts.push(tenant.id, [{ ...greetPrompt, slug: "ok", model }]);
      expect(pushed?.created).toBe(true);
    }
  });

  test("with the development model turned off, dev:* is rejected at push", async () => {
    const { services, createTenant } = createServiceFixture({ devModel: false });
    const { tenant } = await createTenant();
    expect((await rejection(services.prompts.push(tenant.id, [greetPrompt]))).message).toBe(
      "prompt 'greet': model 'dev:echo': the development model is turned off on this server (PROMPTRUN_DEV_MODEL=false)",
    );
    expect(
      (await rejection(services.prompts.push(tenant.id, [{ ...greetPrompt, model: "x:y" }]))).message,
    ).toBe("prompt 'greet': unknown model provider 'x' (known: openai, anthropic)");
  });
});
