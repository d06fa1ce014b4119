import { afterAll, describe, expect, test } from "bun:test";
import type { ToolDefinition } from "@promptrun/contract";
import { z } from "zod";
import { type OfferedTool, openRunTools } from "./index.ts";
import { startMcpServer, testContext } from "./tools-test-fixture.ts";

const weather: ToolDefinition = {
  type: "http",
  name: "get_weather",
  parameters: {
    type: "object",
    properties: { city: { type: "string", minLength: 1 }, units: { enum: ["metric", "imperial"] } },
    required: ["city"],
    additionalProperties: false,
  },
  request: { method: "GET", url: "https://api.example.com/weather?city={{args.city}}" },
};
const lookup: ToolDefinition = {
  type: "function",
  name: "lookup_order",
  parameters: {
    type: "object",
    properties: { number: { type: "string", pattern: "^A-[0-9]+$" } },
    required: ["number"],
  },
};

// An MCP server built with the SDK announces draft-07 schemas: they are checked all the same.
const mcp = startMcpServer({
  register: (server) =>
    server.registerTool(
      "search_docs",
      { inputSchema: { query: z.string(), limit: z.number().int().max(50).optional() } },
      async () => ({
        content: [],
      }),
    ),
});
afterAll(() => mcp.stop());

describe("checkArguments", () => {
  test("accepts arguments that fit; names the first violation otherwise", async () => {
    const tools = await openRunTools(
      [weather, lookup, { type: "mcp", server: { url: mcp.url } }],
      testContext(),
    );
    try {
      expect(tools.checkArguments("get_weather", { city: "Oslo" })).toBeNull();
      expect(tools.checkArguments("get_weather", { city: "Oslo", units: "metric" })).toBeNull();
      expect(tools.checkArguments("get_weather", {})).toBe(
        "arguments do not match the parameters of get_weather: /: must have required property 'city'",
      );
      expect(tools.checkArguments("get_weather", { city: 3 })).toBe(
        "arguments do not match the parameters of get_weather: /city: must be string",
      );
      expect(tools.checkArguments("get_weather", { city: "Oslo", units: "kelvin" })).toBe(
        'arguments do not match the parameters of get_weather: /units: must be equal to one of the allowed values (["metric","imperial"])',
      );
      expect(tools.checkArguments("get_weather", { city: "Oslo", days: 3 })).toBe(
        "arguments do not match the parameters of get_weather: /: must NOT have additional properties (days)",
      );
      expect(tools.checkArguments("lookup_order", { number: "A-17" })).toBeNull();
      expect(tools.checkArguments("lookup_order", { number: "17" })).toBe(
        'arguments do not match the parameters of lookup_order: /number: must match pattern "^A-[0-9]+$"',
      );

      expect(tools.checkArguments("search_docs", { query: "billing", limit: 5 })).toBeNull();
      expect(tools.checkArguments("search_docs", { query: "billing", limit: 500 })).toBe(
        "arguments do not match the parameters of search_docs: /limit: must be <= 50",
      );
      expect(tools.checkArguments("search_docs", { limit: 5 })).toBe(
        "arguments do not match the parameters of search_docs: /: must have required property 'query'",
      );
      expect(tools.checkArguments("drop_db", {})).toBe("no tool named 'drop_db'");
      // Asked again: the same answer from the cached validator.
      expect(tools.checkArguments("get_weather", {})).toBe(
        "arguments do not match the parameters of get_weather: /: must have required property 'city'",
      );
    } finally {
      await tools.close();
    }
  });

  test("a function tool is never executed by the server", async () => {
    const tools = await openRunTools([lookup], testContext());
    expect(
      await tools.execute(
        { id: "c", name: "lookup_order", arguments: { number: "A-1" } },
        new AbortController().signal,
      ),
    ).toEqual({
      isError: true,
      output: "lookup_order is executed by the caller, not by the server",
    });
    const offered: OfferedTool[] = [
      { name: "lookup_order", parameters: lookup.parameters, kind: "function" },
    ];
    expect(tools.offered).toEqual(offered);
    await tools.close();
  });
});
