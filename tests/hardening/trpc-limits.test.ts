/**
 * tRPC gets the limits REST has (docs/SECURITY.md "Limits"): body size (refused by declared
 * Content-Length unread, counted otherwise), JSON depth, lone surrogates, Idempotency-Key
 * characters and a batch of at most 10 calls — and while an oversized or deeply nested request
 * is refused, other requests (another tenant, /health) are still answered promptly.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "../support/server.ts";
import { countRows, createTenant, rawConnect, type Tenant, waitUntil } from "./support.ts";

const MIB = 1_048_576;
/** Generous: the point is "not frozen for seconds", not a latency target. */
const PROMPT_MS = 2_000;

let server: TestServer;
let other: Tenant;
beforeAll(async () => {
  server = await startServer();
  other = await createTenant(server, "bystander");
});
afterAll(async () => {
  await server?.dispose();
});

const trpcPost = (
  path: string,
  body: RequestInit["body"],
  init: { key?: string; headers?: Record<string, string> } = {},
) =>
  fetch(`${server.url}/trpc/${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${init.key ?? server.apiKey}`,
      "content-type": "application/json",
      ...init.headers,
    },
    body,
    duplex: "half",
  } as RequestInit);

interface TrpcError {
  error: { message: string; data: { httpStatus: number; errorCode: string } };
}
const errorOf = async (response: Response) => ((await response.json()) as TrpcError).error;

/** Times /health and another tenant's run.list until `done` resolves; returns the slowest answer (ms). */
async function slowestBystander(done: Promise<unknown>): Promise<number> {
  let finished = false;
  done.finally(() => {
    finished = true;
  });
  let slowest = 0;
  let probes = 0;
  while (!finished || probes < 3) {
    const started = performance.now();
    const [health, list] = await Promise.all([
      fetch(`${server.url}/health`),
      fetch(`${server.url}/trpc/run.list?input=${encodeURIComponent("{}")}`, {
        headers: { authorization: `Bearer ${other.apiKey}` },
      }),
    ]);
    expect(health.status).toBe(200);
    expect(list.status).toBe(200);
    slowest = Math.max(slowest, performance.now() - started);
    probes++;
    await Bun.sleep(20);
  }
  return slowest;
}

const pushBody = (description: string) =>
  JSON.stringify({
    files: [
      {
        slug: "big",
        model: "dev:echo",
        description,
        messages: [{ role: "user", content: "hi" }],
      },
    ],
  });

describe("body size (1 MiB, as REST)", () => {
  test("a 120 MB Content-Length on prompt.push is 413 without reading the body", async () => {
    const socket = await rawConnect(server);
    socket.write(
      `POST /trpc/prompt.push HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${120 * MIB}\r\n\r\n{"files":`,
    );
    await waitUntil(() => socket.received().includes("\r\n\r\n{"), "the 413 answer", 10_000);
    socket.end();
    expect(socket.received()).toStartWith("HTTP/1.1 413");
    expect(socket.received()).toContain("exceeds 1048576 bytes");
  });

  test("a chunked 120 MB prompt.push is cut at the limit (413) while /health and another tenant are answered promptly", async () => {
    let sent = 0;
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    const prefix = new TextEncoder().encode(pushBody("").replace('"description":""', '"description":"'));
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) {
          sent += prefix.byteLength;
          controller.enqueue(prefix);
          return;
        }
        if (sent >= 120 * MIB) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const upload = trpcPost("prompt.push", body);
    const slowest = await slowestBystander(upload);
    const response = await upload;
    expect(response.status).toBe(413);
    expect((await errorOf(response)).data.errorCode).toBe("payload_too_large");
    expect(sent).toBeLessThan(64 * MIB);
    expect(slowest).toBeLessThan(PROMPT_MS);
  });

  test("5 MB of metadata on run.create is 413, as on REST", async () => {
    const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "m".repeat(100_000)]));
    const before = await countRows(server, "select count(*) as n from runs");
    const response = await trpcPost(
      "run.create",
      JSON.stringify({ slug: "greet", version: "latest", inputs: { name: "a" }, metadata }),
    );
    expect(response.status).toBe(413);
    expect(await countRows(server, "select count(*) as n from runs")).toBe(before);
  });
});

describe("JSON depth (64 levels, as REST)", () => {
  test("inputs nested 50,000 deep are 400 (not 500) while others are answered promptly", async () => {
    const deep = `${"[".repeat(50_000)}${"]".repeat(50_000)}`;
    const requests = Promise.all(
      Array.from({ length: 5 }, () =>
        trpcPost("run.create", `{"slug":"greet","version":"latest","inputs":{"name":${deep}}}`),
      ),
    );
    const slowest = await slowestBystander(requests);
    for (const response of await requests) {
      expect(response.status).toBe(400);
      expect((await errorOf(response)).message).toBe("request body nests deeper than 64 levels");
    }
    expect(slowest).toBeLessThan(PROMPT_MS);
  });

  test("a deep ?input= on a query is 400", async () => {
    const input = encodeURIComponent(`{"id":${"[".repeat(2_000)}${"]".repeat(2_000)}}`);
    const response = await fetch(`${server.url}/trpc/run.get?input=${input}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).message).toContain("nests deeper than 64 levels");
  });
});

describe("string rules (as REST)", () => {
  test("a lone surrogate in run.create inputs is 400 and nothing is stored", async () => {
    const before = await countRows(server, "select count(*) as n from runs");
    const response = await trpcPost(
      "run.create",
      '{"slug":"greet","version":"latest","inputs":{"name":"a\\ud800b"}}',
    );
    expect(response.status).toBe(400);
    expect((await errorOf(response)).message).toContain("lone UTF-16 surrogate");
    expect(await countRows(server, "select count(*) as n from runs")).toBe(before);
  });

  test("a lone surrogate in a ?input= query is 400", async () => {
    // A tag name is any string: without the check this reads as an unknown tag (404).
    const input = encodeURIComponent('{"slug":"greet","version":"t\\udc00"}');
    const response = await fetch(`${server.url}/trpc/prompt.get?input=${input}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(response.status).toBe(400);
  });

  test("idempotencyKey with NUL, CR/LF or non-ASCII is 400; printable ASCII is accepted", async () => {
    for (const key of ["a\u0000b", "a\r\nb", "ключ", "a\tb", "x".repeat(256)]) {
      const response = await trpcPost(
        "run.create",
        JSON.stringify({ slug: "greet", version: "latest", inputs: { name: "a" }, idempotencyKey: key }),
      );
      expect({ key, status: response.status }).toEqual({ key, status: 400 });
      expect((await errorOf(response)).message).toContain("printable ASCII");
    }
    const ok = await trpcPost(
      "run.create",
      JSON.stringify({
        slug: "greet",
        version: "latest",
        inputs: { name: "a" },
        idempotencyKey: "order-42 ok",
      }),
    );
    expect(ok.status).toBe(200);
  });
});

describe("batches and content types", () => {
  const batchGet = (calls: number) => {
    const paths = Array.from({ length: calls }, () => "prompt.list").join(",");
    const input = Object.fromEntries(Array.from({ length: calls }, (_, i) => [String(i), {}]));
    return fetch(`${server.url}/trpc/${paths}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
  };

  test("a batch of 10 calls is answered; 11 is 400 for every call, before any runs", async () => {
    expect((await batchGet(10)).status).toBe(200);
    const refused = await batchGet(11);
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as TrpcError[];
    expect(body).toHaveLength(11);
    expect(body[0]?.error.message).toBe("a batch holds at most 10 calls; this one has 11");
    const posted = await trpcPost(
      `${Array.from({ length: 1_000 }, () => "run.create").join(",")}?batch=1`,
      "{}",
    );
    expect(posted.status).toBe(400);
  });

  test("a multipart or octet-stream POST is 415 (tRPC would buffer it whole)", async () => {
    const form = new FormData();
    form.set("files", "x".repeat(1_000));
    const multipart = await fetch(`${server.url}/trpc/prompt.push`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: form,
    });
    expect(multipart.status).toBe(415);
    const octets = await trpcPost("prompt.push", new Uint8Array(10), {
      headers: { "content-type": "application/octet-stream" },
    });
    expect(octets.status).toBe(415);
  });
});
