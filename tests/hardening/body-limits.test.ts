/**
 * Body size and nesting limits, enforced before parsing: a 100 MB upload announced by
 * Content-Length is refused without being read, a chunked upload is cut off at the limit, and
 * the server's resident memory (from /proc/<pid>/status) barely moves either way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { demoKnowledgeIngested } from "../support/knowledge.ts";
import { api, startServer, type TestServer } from "../support/server.ts";
import { rawConnect, residentKb, waitUntil } from "./support.ts";

const MIB = 1_048_576;
const RUNS_PATH = "/api/v1/prompts/greet/latest/runs";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  await demoKnowledgeIngested(server);
});
afterAll(async () => {
  await server?.dispose();
});

const errorOf = async (response: Response) => ((await response.json()) as { error: string }).error;

describe("body size limit (1 MiB)", () => {
  test("a 100 MB Content-Length is answered 413 after a few bytes, without reading the body", async () => {
    const before = residentKb(server.process.pid);
    const socket = await rawConnect(server);
    socket.write(
      `POST ${RUNS_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{"inputs":`,
    );
    // Nothing more is sent: the answer can only come from the declared length.
    await waitUntil(() => socket.received().includes("\r\n\r\n{"), "the 413 answer", 10_000);
    socket.end();
    expect(socket.received()).toStartWith("HTTP/1.1 413");
    expect(socket.received()).toContain('"error":"request body exceeds 1048576 bytes"');
    const grown = residentKb(server.process.pid) - before;
    expect(grown).toBeLessThan(8 * 1024);
  });

  test("a chunked upload without Content-Length is cut off at the limit (413), not buffered", async () => {
    const before = residentKb(server.process.pid);
    let sent = 0;
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 100 * 1024 * 1024) {
          controller.close();
          return;
        }
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${server.url}${RUNS_PATH}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await errorOf(response)).toContain("exceeds 1048576 bytes");
    // More than the limit went out (it was read up to there), but never the 100 MB offered.
    expect(sent).toBeGreaterThan(MIB);
    expect(sent).toBeLessThan(32 * MIB);
    const grown = residentKb(server.process.pid) - before;
    expect(grown).toBeLessThan(24 * 1024);
    // The server is still fine.
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  test("the limit counts UTF-8 bytes: 1 MiB of characters that are 2 bytes each is refused", async () => {
    const text = "é".repeat(600_000); // 600,000 characters, 1,200,000 bytes
    const response = await api(server, RUNS_PATH, { method: "POST", json: { inputs: { name: text } } });
    expect(response.status).toBe(413);
    const justUnder = await api(server, RUNS_PATH, {
      method: "POST",
      json: { inputs: { name: "a".repeat(MIB - 100) } },
    });
    expect(justUnder.status).not.toBe(413);
    expect(justUnder.status).toBeLessThan(500);
  });
});

describe("JSON nesting limit (64 levels)", () => {
  test("deep nesting is a 400 before parsing; 100,000 levels do not hurt the server", async () => {
    const nested = (depth: number) =>
      `{"inputs":{"name":"x"},"metadata":{"a":${"[".repeat(depth)}${"]".repeat(depth)}}}`;
    const send = (text: string) =>
      fetch(`${server.url}${RUNS_PATH}`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
        body: text,
      });
    const deep = await send(nested(100));
    expect(deep.status).toBe(400);
    expect(await errorOf(deep)).toContain("nests deeper than 64 levels");

    const hostile = await send("[".repeat(500_000));
    expect(hostile.status).toBe(400);
    const hostileObject = await send('{"a":'.repeat(150_000));
    expect(hostileObject.status).toBe(400);

    // Within the limit, the depth check lets it through to validation (metadata values are strings).
    const shallow = await send(nested(10));
    expect(shallow.status).toBe(400);
    expect(await errorOf(shallow)).toContain("metadata");
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
