import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isUuid } from "@promptrun/contract";
import { createTestApp, type TestApp } from "../http/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.dispose();
});

const RUNS = "/api/v1/prompts/greet/latest/runs";
const TWO_MIB = "x".repeat(2 * 1024 * 1024);

async function expectError(response: Response, status: number, message?: string | RegExp) {
  const text = await response.text();
  const body = JSON.parse(text) as { error: string; code: string };
  expect(`${response.status} ${text}`).toStartWith(`${status} `);
  expect(typeof body.error).toBe("string");
  expect(text).not.toContain("    at ");
  if (message !== undefined) expect(body.error).toMatch(message);
  return body;
}

describe("POST /api/v1/prompts/{slug}/{version}/runs", () => {
  test("202 with {id, thread}, Location and RateLimit headers; the run is readable", async () => {
    const response = await t.request(RUNS, {
      method: "POST",
      key: t.keys.a,
      json: { inputs: { name: "Ada" } },
    });
    expect(response.status).toBe(202);
    const body = (await response.json()) as { id: string; thread: string };
    expect(Object.keys(body).sort()).toEqual(["id", "thread"]);
    expect(isUuid(body.id) && isUuid(body.thread)).toBe(true);
    expect(response.headers.get("location")).toBe(`/api/v1/promptruns/${body.id}`);
    expect(response.headers.get("ratelimit-limit")).toBe("200");
    expect(Number(response.headers.get("ratelimit-remaining"))).toBeLessThan(200);
    expect(response.headers.get("idempotent-replayed")).toBeNull();
    const read = await t.request(`/api/v1/promptruns/${body.id}`, { key: t.keys.a });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: body.id, thread: body.thread, prompt: { slug: "greet" } });
  });

  test("continues a given thread and accepts version numbers, tags, ids and any JSON charset", async () => {
    const thread = crypto.randomUUID();
    const version = await t.services.prompts.get(t.tenants.a, "greet", "latest");
    for (const segment of ["1", "production", version.id]) {
      const response = await t.request(`/api/v1/prompts/greet/${segment}/runs`, {
        method: "POST",
        key: t.keys.a,
        headers: { "content-type": "Application/JSON; charset=UTF-8" },
        json: { inputs: { name: "x" }, thread },
      });
      expect(response.status).toBe(202);
      expect(((await response.json()) as { thread: string }).thread).toBe(thread);
    }
  });

  describe("precedence: the first failing rule wins", () => {
    test("malformed slug (404) beats a missing key, a wrong content type and a huge body", async () => {
      for (const slug of [
        "..%2F..%2Fetc",
        "gr%C3%BC%C3%9Fe",
        "Greet",
        "%E0%A4%A",
        "-greet",
        "a%00b",
        "x".repeat(101),
      ]) {
        const response = await t.request(`/api/v1/prompts/${slug}/latest/runs`, {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: TWO_MIB,
        });
        await expectError(response, 404, "prompt not found");
      }
    });

    test("a malformed version segment is a 404 before authentication", async () => {
      for (const version of ["bad%20tag", "..%2F1", "%F0%9F%98%80", "-x"]) {
        const response = await t.request(`/api/v1/prompts/greet/${version}/runs`, { method: "POST" });
        await expectError(response, 404);
      }
    });

    test("missing or invalid key (401) beats inactive-ness, content type and size", async () => {
      const violating = { method: "POST", headers: { "content-type": "text/plain" }, body: TWO_MIB };
      await expectError(await t.request(RUNS, violating), 401);
      await expectError(await t.request(RUNS, { ...violating, key: "pr_nope" }), 401);
      await expectError(
        await t.request(RUNS, {
          ...violating,
          headers: { ...violating.headers, authorization: "Basic abc" },
        }),
        401,
      );
    });

    test("inactive subscription (403) beats content type and size", async () => {
      const response = await t.request(RUNS, {
        method: "POST",
        key: t.keys.inactive,
        headers: { "content-type": "text/plain" },
        body: TWO_MIB,
      });
      await expectError(response, 403, "no active subscription");
    });

    test("content type (415) beats size and invalid JSON; a missing type is a 415", async () => {
      await expectError(
        await t.request(RUNS, {
          method: "POST",
          key: t.keys.a,
          headers: { "content-type": "text/plain" },
          body: TWO_MIB,
        }),
        415,
      );
      const missing = new Request(`http://localhost${RUNS}`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.keys.a}` },
        body: new Blob(["{not json"]),
      });
      expect(missing.headers.get("content-type")).toBeNull();
      await expectError(await t.app.fetch(missing), 415, "application/json");
    });

    test("size (413) beats invalid JSON and an unknown prompt: 2 MiB body", async () => {
      const response = await t.request("/api/v1/prompts/nope/latest/runs", {
        method: "POST",
        key: t.keys.a,
        headers: { "content-type": "application/json" },
        body: `{${TWO_MIB}`,
      });
      await expectError(response, 413);
    });

    test("size (413) when Content-Length lies: the bytes are counted", async () => {
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            pulled++;
            if (pulled > 64) return controller.close();
            controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
          },
        },
        { highWaterMark: 0 },
      );
      const request = new Request(`http://localhost${RUNS}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${t.keys.a}`,
          "content-type": "application/json",
          "content-length": "20",
        },
        body,
      });
      await expectError(await t.app.fetch(request), 413);
      expect(pulled).toBeLessThanOrEqual(17);
    });

    test("a Content-Length over the limit is refused without reading the body", async () => {
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            pulled++;
            controller.close();
          },
        },
        { highWaterMark: 0 },
      );
      const request = new Request(`http://localhost${RUNS}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${t.keys.a}`,
          "content-type": "application/json",
          "content-length": String(2 * 1024 * 1024),
        },
        body,
      });
      await expectError(await t.app.fetch(request), 413);
      expect(pulled).toBe(0);
    });

    test("invalid JSON (400) beats an unknown prompt (404)", async () => {
      for (const body of ["{not json", "", "   ", "[".repeat(10_000) + "]".repeat(10_000)]) {
        const response = await t.request("/api/v1/prompts/nope/latest/runs", {
          method: "POST",
          key: t.keys.a,
          headers: { "content-type": "application/json" },
          body,
        });
        await expectError(response, 400);
      }
    });

    test("nesting deeper than maxJsonDepth is a 400 naming the limit", async () => {
      const deep = { inputs: { name: "x", nested: JSON.parse(`${"[".repeat(70)}${"]".repeat(70)}`) } };
      await expectError(
        await t.request(RUNS, { method: "POST", key: t.keys.a, json: deep }),
        400,
        "deeper than 64",
      );
    });

    test("unknown slug, version, tag or id (404) beats body validation (400)", async () => {
      const invalidBody = { inputs: 5, extra: true };
      for (const path of [
        "/api/v1/prompts/nope/latest/runs",
        "/api/v1/prompts/greet/99/runs",
        "/api/v1/prompts/greet/no-such-tag/runs",
        `/api/v1/prompts/greet/${crypto.randomUUID()}/runs`,
      ]) {
        await expectError(await t.request(path, { method: "POST", key: t.keys.a, json: invalidBody }), 404);
      }
    });

    test("another tenant's prompt is a 404 for tenant B", async () => {
      await expectError(
        await t.request(RUNS, { method: "POST", key: t.keys.b, json: { inputs: { name: "x" } } }),
        404,
      );
    });
  });

  test("body and input validation is a 400 naming the field", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /inputs/],
      [[], /./],
      [null, /./],
      ["inputs", /./],
      [{ inputs: "x" }, /inputs/],
      [{ inputs: { name: "x" }, extra: 1 }, /extra/],
      [{ inputs: {} }, /name/],
      [{ inputs: { name: 5 } }, /name/],
      [{ inputs: { name: "x", count: 1.5 } }, /count/],
      [{ inputs: { name: "x", unknown: 1 } }, /unknown/],
      [{ inputs: { name: "x" }, thread: "not-a-uuid" }, /thread/],
      [{ inputs: { name: "x" }, priority: "urgent" }, /priority/],
      [{ inputs: { name: "x" }, envVars: { lower: "v" } }, /UPPER_CASE/],
      [{ inputs: { name: "x" }, envVars: { KEY: 1 } }, /envVars/],
      [{ inputs: { name: "x" }, metadata: { k: 1 } }, /metadata/],
      [{ inputs: { name: "x" }, environment: "staging" }, /environment/],
    ];
    for (const [body, message] of cases) {
      const response = await t.request(RUNS, { method: "POST", key: t.keys.a, json: body });
      const error = await expectError(response, 400);
      expect(error.error, JSON.stringify(body)).toMatch(message);
    }
  });

  describe("Idempotency-Key", () => {
    test("a replay returns the same 202 body, marked Idempotent-Replayed", async () => {
      const key = `key-${crypto.randomUUID()}`;
      const send = () =>
        t.request(RUNS, {
          method: "POST",
          key: t.keys.a,
          headers: { "idempotency-key": key },
          json: { inputs: { name: "Ada" } },
        });
      const first = await send();
      const second = await send();
      expect([first.status, second.status]).toEqual([202, 202]);
      const firstBody = await first.json();
      expect(await second.json()).toEqual(firstBody);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      expect(second.headers.get("idempotent-replayed")).toBe("true");
      expect(second.headers.get("location")).toBe(first.headers.get("location"));
    });

    test("the same key with another body is a 409", async () => {
      const key = `key-${crypto.randomUUID()}`;
      const send = (name: string) =>
        t.request(RUNS, {
          method: "POST",
          key: t.keys.a,
          headers: { "idempotency-key": key },
          json: { inputs: { name } },
        });
      expect((await send("a")).status).toBe(202);
      await expectError(await send("b"), 409);
    });

    test("a malformed key is a 400, after an unknown prompt's 404", async () => {
      const headers = { "idempotency-key": "k".repeat(256) };
      const json = { inputs: { name: "x" } };
      await expectError(
        await t.request(RUNS, { method: "POST", key: t.keys.a, headers, json }),
        400,
        "Idempotency-Key",
      );
      await expectError(
        await t.request("/api/v1/prompts/nope/latest/runs", { method: "POST", key: t.keys.a, headers, json }),
        404,
      );
    });
  });
});

describe("rate limiting", () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ engine: { rateLimit: { perSecond: 0.001, burst: 2 } } });
  });
  afterAll(async () => {
    await limited.dispose();
  });

  test("429 with Retry-After and RateLimit-* once the burst is spent", async () => {
    const send = () =>
      limited.request(RUNS, { method: "POST", key: limited.keys.a, json: { inputs: { name: "x" } } });
    expect((await send()).status).toBe(202);
    const second = await send();
    expect(second.status).toBe(202);
    expect(second.headers.get("ratelimit-remaining")).toBe("0");
    const third = await send();
    await expectError(third, 429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(third.headers.get("ratelimit-limit")).toBe("2");
    expect(third.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(third.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
  });
});
