import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { defaultConfig } from "../../config.ts";
import { PromptrunError } from "../../errors.ts";
import { EmbeddingError } from "../ports.ts";
import {
  createEmbeddingModelResolver,
  type EmbeddingConfig,
  validateEmbeddingModelRef,
} from "./resolve-embedding-model.ts";

// ---------------------------------------------------------------- a fake OpenAI embeddings endpoint, on the wire

interface Seen {
  path: string;
  authorization: string | null;
  model: string;
  input: string[];
}
const seen: Seen[] = [];
/** Statuses to answer before answering normally (one per request). */
let failures: number[] = [];

/** Not normalised on purpose: [length, words, 1]. */
const fakeEmbedding = (text: string) => [text.length, text.split(" ").length, 1];

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    const body = (await request.json()) as { model: string; input: string[] };
    seen.push({
      path: url.pathname,
      authorization: request.headers.get("authorization"),
      model: body.model,
      input: body.input,
    });
    const failure = failures.shift();
    if (failure) {
      return Response.json(
        {
          error: {
            message: failure === 401 ? "Incorrect API key provided" : "upstream exploded",
            type: "server_error",
          },
        },
        { status: failure, headers: { "retry-after-ms": "5" } },
      );
    }
    if (url.pathname !== "/v1/embeddings") return new Response("not found", { status: 404 });
    return Response.json({
      object: "list",
      data: body.input.map((text, index) => ({ object: "embedding", index, embedding: fakeEmbedding(text) })),
      model: body.model,
      usage: { prompt_tokens: body.input.length * 10, total_tokens: body.input.length * 10 },
    });
  },
});
afterAll(() => server.stop(true));
const baseUrl = `http://127.0.0.1:${server.port}/v1`;

beforeEach(() => {
  seen.length = 0;
  failures = [];
});

const config = (overrides: Partial<EmbeddingConfig> = {}): EmbeddingConfig => {
  const base = defaultConfig({ secret: "s".repeat(32) });
  return {
    devModel: true,
    providers: {
      openai: { apiKey: "sk-test-key", baseUrl },
      anthropic: {},
      compatible: [{ name: "local", baseUrl }],
    },
    priceOverrides: {},
    knowledge: { ...base.knowledge, embeddingBatchSize: 2 },
    ...overrides,
  };
};

const norm = (vector: Float32Array) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

describe("openai embeddings through the AI SDK", () => {
  test("batches, order, normalised vectors, tokens and cost from the price data", async () => {
    const model = createEmbeddingModelResolver({ config: config() })("openai:text-embedding-3-small");
    const texts = ["one", "two words", "three little words", "four", "five"];
    const result = await model.embed(texts);
    expect(seen.map((request) => request.input)).toEqual([
      ["one", "two words"],
      ["three little words", "four"],
      ["five"],
    ]);
    expect(seen[0]).toMatchObject({
      path: "/v1/embeddings",
      authorization: "Bearer sk-test-key",
      model: "text-embedding-3-small",
    });
    expect(result.vectors).toHaveLength(5);
    for (const [index, vector] of result.vectors.entries()) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(norm(vector)).toBeCloseTo(1, 5);
      const raw = fakeEmbedding(texts[index]!);
      expect(vector[0]! / vector[2]!).toBeCloseTo(raw[0]! / raw[2]!, 4);
    }
    expect(result.tokens).toBe(50);
    // text-embedding-3-small: $0.02 per million input tokens.
    expect(result.cost).toEqual({ total: 0.000001, priced: true });
  });

  test("a 500 is retried and the call succeeds", async () => {
    failures = [500];
    const result = await createEmbeddingModelResolver({ config: config() })(
      "openai:text-embedding-3-small",
    ).embed(["a"]);
    expect(seen).toHaveLength(2);
    expect(result.vectors).toHaveLength(1);
  });

  test("a provider that keeps failing ends in EmbeddingError after the retries", async () => {
    failures = [500, 500, 500];
    const model = createEmbeddingModelResolver({ config: config(), maxRetries: 2 })(
      "openai:text-embedding-3-small",
    );
    const error = await model.embed(["a"]).catch((caught) => caught);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect(error.message).toStartWith("embedding with openai:text-embedding-3-small failed:");
    expect(error.message).toContain("upstream exploded");
    expect(seen).toHaveLength(3);
  });

  test("a connection failure is retried too", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const deadUrl = `http://127.0.0.1:${closed.port}/v1`;
    closed.stop(true);
    let attempts = 0;
    const transport = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      attempts++;
      return fetch(input, init);
    }) as typeof fetch;
    const dead = config({
      providers: { openai: { apiKey: "sk-test-key", baseUrl: deadUrl }, anthropic: {}, compatible: [] },
    });
    const error = await createEmbeddingModelResolver({ config: dead, fetch: transport, maxRetries: 1 })(
      "openai:text-embedding-3-small",
    )
      .embed(["a"])
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect(attempts).toBe(2);
  });

  test("a 401 is not retried, and the key never shows", async () => {
    failures = [401];
    const error = await createEmbeddingModelResolver({ config: config() })("openai:text-embedding-3-small")
      .embed(["a"])
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect(error.message).toContain("Incorrect API key provided");
    expect(error.message).not.toContain("sk-test-key");
    expect(seen).toHaveLength(1);
  });

  test("priceOverrides win over the price data", async () => {
    const priced = config({
      priceOverrides: { "openai:text-embedding-3-small": { inputPerMillion: 1, outputPerMillion: 0 } },
    });
    const result = await createEmbeddingModelResolver({ config: priced })(
      "openai:text-embedding-3-small",
    ).embed(["a", "b"]);
    expect(result.cost).toEqual({ total: 0.00002, priced: true });
  });

  test("no texts: no request", async () => {
    const result = await createEmbeddingModelResolver({ config: config() })(
      "openai:text-embedding-3-small",
    ).embed([]);
    expect(result).toEqual({ vectors: [], tokens: 0, cost: { total: 0, priced: true } });
    expect(seen).toHaveLength(0);
  });

  test("an aborted call rejects with the abort, not an EmbeddingError", async () => {
    const controller = new AbortController();
    controller.abort(new Error("lease lost"));
    const error = await createEmbeddingModelResolver({ config: config() })("openai:text-embedding-3-small")
      .embed(["a"], { signal: controller.signal })
      .catch((caught) => caught);
    expect(error).not.toBeInstanceOf(EmbeddingError);
    expect(error.message).toBe("lease lost");
  });
});

describe("OpenAI-compatible endpoints", () => {
  test("embed through the configured base URL; no known price → priced: false", async () => {
    const result = await createEmbeddingModelResolver({ config: config() })("local:nomic-embed-text").embed([
      "x y",
    ]);
    expect(seen[0]).toMatchObject({ path: "/v1/embeddings", model: "nomic-embed-text", authorization: null });
    expect(result.tokens).toBe(10);
    expect(result.cost).toEqual({ total: 0, priced: false });
  });

  test("the injected transport carries every provider's calls", async () => {
    const urls: string[] = [];
    const transport = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      urls.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    }) as typeof fetch;
    const resolve = createEmbeddingModelResolver({ config: config(), fetch: transport });
    await resolve("local:nomic-embed-text").embed(["x"]);
    await resolve("openai:text-embedding-3-small").embed(["y"]);
    expect(urls).toEqual([`${baseUrl}/embeddings`, `${baseUrl}/embeddings`]);
  });

  test("an override prices them", async () => {
    const priced = config({
      priceOverrides: { "local:nomic-embed-text": { inputPerMillion: 0.5, outputPerMillion: 0 } },
    });
    const result = await createEmbeddingModelResolver({ config: priced })("local:nomic-embed-text").embed([
      "x",
    ]);
    expect(result.cost).toEqual({ total: 0.000005, priced: true });
  });
});

describe("resolving and validating refs", () => {
  test("dev:hash only while the development model is on", async () => {
    const resolve = createEmbeddingModelResolver({ config: config() });
    expect(resolve("dev:hash").ref).toBe("dev:hash");
    expect((await resolve("dev:hash").embed(["hello"])).vectors[0]).toHaveLength(256);
    expect(() => createEmbeddingModelResolver({ config: config({ devModel: false }) })("dev:hash")).toThrow(
      EmbeddingError,
    );
    expect(() => validateEmbeddingModelRef("dev:hash", config({ devModel: false }))).toThrow(
      "PROMPTRUN_DEV_MODEL=false",
    );
  });

  test("unknown providers, anthropic, a missing key, a malformed ref", () => {
    const resolve = createEmbeddingModelResolver({ config: config() });
    expect(() => resolve("cohere:embed-v3")).toThrow(
      "unknown embedding provider 'cohere' (known: dev (dev:hash), openai, local)",
    );
    expect(() => resolve("anthropic:x")).toThrow("anthropic has no embedding models");
    expect(() => resolve("dev:echo")).toThrow("dev:hash is the built-in one");
    const keyless = config({ providers: { openai: {}, anthropic: {}, compatible: [] } });
    expect(() => createEmbeddingModelResolver({ config: keyless })("openai:text-embedding-3-small")).toThrow(
      new EmbeddingError("no API key for openai: set OPENAI_API_KEY"),
    );
    for (const ref of ["cohere:embed-v3", "nocolon", "dev:hash2"]) {
      let caught: unknown;
      try {
        validateEmbeddingModelRef(ref, config());
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PromptrunError);
      expect((caught as PromptrunError).code).toBe("invalid");
    }
    expect(() => validateEmbeddingModelRef("openai:text-embedding-3-small", keyless)).toThrow(
      "OPENAI_API_KEY",
    );
    validateEmbeddingModelRef("openai:text-embedding-3-large", config());
    validateEmbeddingModelRef("local:anything", config());
  });
});
