import { describe, expect, test } from "bun:test";
import { DEFAULT_ENVIRONMENT } from "../environments/default-environment.ts";
import { rejection } from "../testing/rejection.ts";
import { createServiceFixture, greetPrompt } from "../testing/service-fixture.ts";

const THREAD = "0190f1f0-0000-7000-8000-0000000000aa";
const SECRET_VALUE = "sk-live-very-secret-value";

const envPrompt = {
  slug: "keyed",
  model: "dev:echo",
  inputs: { name: { type: "string" } },
  messages: [
    { role: "system", content: "Use {{env.SECRET}} and {{env.REGION}}." },
    { role: "user", content: "Hi {{name}}" },
  ],
} as const;

const setup = async () => {
  const fixture = createServiceFixture();
  const { tenant } = await fixture.createTenant("A");
  const { tenant: other } = await fixture.createTenant("B");
  await fixture.services.prompts.push(tenant.id, [greetPrompt, envPrompt]);
  const environment = await fixture.store.environments.get(tenant.id, DEFAULT_ENVIRONMENT);
  if (!environment) throw new Error("no default environment");
  await fixture.store.environments.setEnvVars(
    environment.id,
    { SECRET: fixture.secrets.encrypt(SECRET_VALUE) },
    fixture.clock.now(),
  );
  return { ...fixture, tenant, other };
};

const toolPrompt = {
  slug: "agent",
  model: "dev:echo",
  inputs: {},
  messages: [{ role: "user", content: "Where is my order?" }],
  tools: [
    {
      type: "function",
      name: "lookup_order",
      description: "Look an order up by its number.",
      parameters: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
    },
    {
      type: "http",
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" } } },
      request: {
        method: "GET",
        url: "https://api.example.com/weather?city={{args.city}}&key={{env.WEATHER_KEY}}",
        headers: { Authorization: "Bearer {{env.WEATHER_KEY}}" },
      },
    },
    {
      type: "mcp",
      server: {
        url: "https://bot:{{env.MCP_PASSWORD}}@mcp.example.com/{{env.MCP_TENANT}}/mcp?token={{env.MCP_TOKEN}}#frag",
        headers: { Authorization: "Bearer {{env.MCP_TOKEN}}" },
      },
      allowedTools: ["search_docs"],
    },
    { type: "mcp", server: { url: "https://docs.example.com/mcp" } },
  ],
} as const;

describe("RunService.render", () => {
  test("the version's request: system then user messages, no memory without a thread, no tools", async () => {
    const { services, tenant } = await setup();
    const rendered = await services.runs.render(tenant.id, "greet", "production", {
      inputs: { name: "Ada" },
    });
    expect(rendered).toEqual({
      model: "dev:echo",
      params: {},
      messages: [
        { role: "system", content: "Greet people in a friendly tone." },
        { role: "user", content: "Say hello to Ada." },
      ],
      tools: [],
      output: null,
      providerOptions: null,
      memory: { messages: 0, dropped: 0 },
    });
  });

  test("tools as offered to the model; MCP servers by URL without query or credentials, unlisted", async () => {
    const { services, tenant } = await setup();
    await services.prompts.push(tenant.id, [toolPrompt]);
    const rendered = await services.runs.render(tenant.id, "agent", "latest", {
      inputs: {},
      envVars: { WEATHER_KEY: "k", MCP_PASSWORD: "p", MCP_TENANT: "t", MCP_TOKEN: "x" },
    });
    expect(rendered.tools).toEqual([
      {
        type: "function",
        name: "lookup_order",
        description: "Look an order up by its number.",
        parameters: { type: "object", properties: { number: { type: "string" } }, required: ["number"] },
      },
      {
        type: "http",
        name: "get_weather",
        description: null,
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
      {
        type: "mcp",
        server: "https://mcp.example.com/{{env.MCP_TENANT}}/mcp",
        allowedTools: ["search_docs"],
      },
      { type: "mcp", server: "https://docs.example.com/mcp", allowedTools: null },
    ]);
    // How a server tool is reached (URLs, headers, credentials' names) is not part of what the model sees.
    expect(JSON.stringify(rendered.tools)).not.toMatch(
      /WEATHER_KEY|MCP_PASSWORD|MCP_TOKEN|api\.example|Bearer/,
    );
  });

  test("env vars render as [env:NAME]; their values are never in the answer", async () => {
    const { services, tenant } = await setup();
    const rendered = await services.runs.render(tenant.id, "keyed", "1", {
      inputs: { name: "Ada" },
      envVars: { REGION: "eu-west-1" },
    });
    expect(rendered.messages[0]).toEqual({ role: "system", content: "Use [env:SECRET] and [env:REGION]." });
    expect(JSON.stringify(rendered)).not.toContain(SECRET_VALUE);
    expect(JSON.stringify(rendered)).not.toContain("eu-west-1");
  });

  test("an env var set nowhere is a 400 naming it, the error the run would fail with", async () => {
    const { services, tenant } = await setup();
    const error = await rejection(
      services.runs.render(tenant.id, "keyed", "latest", { inputs: { name: "A" } }),
    );
    expect(error.code).toBe("invalid");
    expect(error.message).toStartWith("env var 'REGION' is not set");
  });

  test("create-run's checks, messages and order: version 404 before body, body before inputs", async () => {
    const { services, tenant, other } = await setup();
    const cases: Array<[string, string, unknown, string, string]> = [
      ["nope", "latest", { bogus: 1 }, "not_found", "prompt 'nope' not found"],
      ["greet", "7", { bogus: 1 }, "not_found", "prompt 'greet' has no version 7"],
      ["greet", "latest", { inputs: {}, bogus: 1 }, "invalid", "unknown field 'bogus'"],
      ["greet", "latest", { inputs: {}, priority: "low" }, "invalid", "unknown field 'priority'"],
      ["greet", "latest", { inputs: {}, thread: "x" }, "invalid", "thread: must be a UUID"],
      ["greet", "latest", { inputs: {} }, "invalid", "missing required input: inputs.name"],
      [
        "greet",
        "latest",
        { inputs: { name: "A" }, environment: "staging" },
        "invalid",
        "environment: unknown environment 'staging'",
      ],
    ];
    for (const [slug, version, body, code, message] of cases) {
      const error = await rejection(services.runs.render(tenant.id, slug, version, body));
      expect([error.code, error.message]).toEqual([code, message]);
      // create-run answers the same (its subscription check aside).
      const created = await rejection(services.runs.create(tenant, slug, version, body));
      if (!(body as { priority?: string }).priority)
        expect([created.code, created.message]).toEqual([code, message]);
    }
    // Another tenant's prompt is unknown, not forbidden.
    const foreign = await rejection(
      services.runs.render(other.id, "keyed", "latest", { inputs: { name: "A" } }),
    );
    expect([foreign.code, foreign.message]).toEqual(["not_found", "prompt 'keyed' not found"]);
  });

  test("a thread without history carries none; no subscription is needed (a read)", async () => {
    const { services, tenant, store } = await setup();
    await store.tenants.setSubscription(tenant.id, false);
    const rendered = await services.runs.render(tenant.id, "greet", "latest", {
      inputs: { name: "Ada" },
      thread: THREAD,
      channel: "side",
    });
    expect(rendered.memory).toEqual({ messages: 0, dropped: 0 });
  });

  test("render takes from its own rate-limit bucket, not create-run's", async () => {
    const { services, tenant, rateLimits } = await setup();
    const before = rateLimits.state(tenant.id, "runs.create").remaining;
    await services.runs.render(tenant.id, "greet", "latest", { inputs: { name: "Ada" } });
    expect(rateLimits.state(tenant.id, "runs.create").remaining).toBe(before);
    expect(rateLimits.state(tenant.id, "prompts.render").remaining).toBe(before - 1);
  });
});
