/**
 * The upload limit over a real socket (Bun.serve on 127.0.0.1): the server must answer 413 to a
 * declared 50 MB upload after only its headers, and cut a chunked upload off at the limit.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../http/test-app.ts";
import { createFakeKnowledgeService, type FakeKnowledgeService } from "./testing/fake-knowledge-service.ts";
import { UPLOAD_ENVELOPE_BYTES } from "./upload.ts";

const MAX_UPLOAD = 64 * 1024;
let t: TestApp;
let fake: FakeKnowledgeService;
let server: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  fake = createFakeKnowledgeService();
  t = await createTestApp({
    api: { maxUploadBytes: MAX_UPLOAD },
    wrapServices: (services) => ({ ...services, knowledge: fake }),
  });
  await fake.create(t.tenants.a, { slug: "docs" });
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request, bunServer) => t.app.fetch(request, bunServer),
  });
});
afterAll(async () => {
  server.stop(true);
  await t.dispose();
});

/** Writes `head` on a raw socket, then `body` chunks while the socket is open; resolves with what came back. */
async function rawExchange(
  head: string,
  nextChunk: () => Uint8Array | null,
): Promise<{ reply: string; sent: number }> {
  let reply = "";
  let sent = 0;
  let closed = false;
  const { promise, resolve } = Promise.withResolvers<void>();
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port: server.port as number,
    socket: {
      data(_socket, data) {
        reply += new TextDecoder().decode(data);
        if (reply.includes("\r\n\r\n")) resolve();
      },
      close() {
        closed = true;
        resolve();
      },
      error() {
        resolve();
      },
    },
  });
  socket.write(head);
  // Keep sending (slowly enough to let the answer arrive) until the server answers or closes.
  while (!reply.includes("\r\n\r\n") && !closed) {
    const chunk = nextChunk();
    if (chunk === null) break;
    socket.write(chunk);
    sent += chunk.byteLength;
    await Bun.sleep(1);
  }
  await Promise.race([promise, Bun.sleep(5_000)]);
  socket.end();
  return { reply, sent };
}

test("a declared Content-Length of 50 MB is answered 413 after the headers alone", async () => {
  const head = [
    "POST /api/v1/knowledge-bases/docs/documents HTTP/1.1",
    "Host: 127.0.0.1",
    `Authorization: Bearer ${t.keys.a}`,
    "Content-Type: multipart/form-data; boundary=x",
    `Content-Length: ${50 * 1024 * 1024}`,
    "",
    "",
  ].join("\r\n");
  const { reply, sent } = await rawExchange(head, () => null);
  expect(sent).toBe(0);
  expect(reply).toStartWith("HTTP/1.1 413");
  expect(reply).toContain("PROMPTRUN_MAX_UPLOAD_BYTES");
  expect(fake.uploads).toHaveLength(0);
});

test("a chunked upload without Content-Length is cut off at the limit with 413", async () => {
  const head = [
    "POST /api/v1/knowledge-bases/docs/documents HTTP/1.1",
    "Host: 127.0.0.1",
    `Authorization: Bearer ${t.keys.a}`,
    "Content-Type: application/json",
    "Transfer-Encoding: chunked",
    "",
    "",
  ].join("\r\n");
  const payload = new Uint8Array(16 * 1024).fill(120);
  const frame = new Uint8Array([
    ...new TextEncoder().encode(`${payload.byteLength.toString(16)}\r\n`),
    ...payload,
    ...new TextEncoder().encode("\r\n"),
  ]);
  const limit = 1024 * 1024 * 8; // never reached: the server answers long before
  let total = 0;
  const { reply, sent } = await rawExchange(head, () => {
    total += frame.byteLength;
    return total > limit ? null : frame;
  });
  expect(reply).toStartWith("HTTP/1.1 413");
  expect(sent).toBeGreaterThan(MAX_UPLOAD + UPLOAD_ENVELOPE_BYTES);
  expect(sent).toBeLessThan(limit);
  expect(fake.uploads).toHaveLength(0);
});

test("an upload within the limit over real HTTP is accepted (multipart from fetch)", async () => {
  const form = new FormData();
  form.append("file", new File(["x".repeat(60 * 1024)], "big.txt", { type: "text/plain" }));
  const response = await fetch(`http://127.0.0.1:${server.port}/api/v1/knowledge-bases/docs/documents`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.keys.a}` },
    body: form,
  });
  expect(response.status).toBe(202);
  expect(fake.uploads.at(-1)?.content.byteLength).toBe(60 * 1024);
  expect(fake.uploads.at(-1)?.mediaType).toBe("text/plain");
});
