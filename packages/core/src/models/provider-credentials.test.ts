import { describe, expect, test } from "bun:test";
import { envPrefixOf, resolveProviderCredentials } from "./provider-credentials.ts";

const openai = (server: { apiKey?: string; baseUrl?: string } = {}) => ({
  name: "openai",
  server,
  keyRequired: true,
});

describe("resolveProviderCredentials", () => {
  test("tenant key wins over the server's; the server's base URL stays", () => {
    expect(
      resolveProviderCredentials(openai({ apiKey: "server", baseUrl: "https://proxy.internal/v1" }), {
        OPENAI_API_KEY: "tenant",
      }),
    ).toEqual({ apiKey: "tenant", baseUrl: "https://proxy.internal/v1", tenantBaseUrl: false });
  });

  test("falls back to the server's key and URL", () => {
    expect(resolveProviderCredentials(openai({ apiKey: "server" }), {})).toEqual({
      apiKey: "server",
      baseUrl: undefined,
      tenantBaseUrl: false,
    });
  });

  test("a tenant base URL requires a tenant key", () => {
    expect(() =>
      resolveProviderCredentials(openai({ apiKey: "server" }), {
        OPENAI_BASE_URL: "https://tenant.example/v1",
      }),
    ).toThrow("OPENAI_BASE_URL from the environment requires OPENAI_API_KEY from the environment too");
    expect(
      resolveProviderCredentials(openai({ apiKey: "server" }), {
        OPENAI_BASE_URL: "https://tenant.example/v1",
        OPENAI_API_KEY: "tenant",
      }),
    ).toEqual({ apiKey: "tenant", baseUrl: "https://tenant.example/v1", tenantBaseUrl: true });
  });

  test("a keyless local endpoint may take a tenant URL when the server holds no key for it", () => {
    const ollama = { name: "ollama", server: { baseUrl: "http://127.0.0.1:11434/v1" }, keyRequired: false };
    expect(resolveProviderCredentials(ollama, { OLLAMA_BASE_URL: "http://gpu.example/v1" })).toEqual({
      apiKey: undefined,
      baseUrl: "http://gpu.example/v1",
      tenantBaseUrl: true,
    });
    expect(() =>
      resolveProviderCredentials(
        { ...ollama, server: { ...ollama.server, apiKey: "operator" } },
        {
          OLLAMA_BASE_URL: "http://gpu.example/v1",
        },
      ),
    ).toThrow("OLLAMA_BASE_URL from the environment requires OLLAMA_API_KEY");
  });

  test("a missing key names the variable; empty strings count as missing", () => {
    expect(() => resolveProviderCredentials(openai(), { OPENAI_API_KEY: "" })).toThrow(
      "no API key for openai: set OPENAI_API_KEY",
    );
    expect(envPrefixOf("my-llm")).toBe("MY_LLM");
  });
});
