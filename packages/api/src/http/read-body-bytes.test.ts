import { describe, expect, test } from "bun:test";
import { PromptrunError } from "@promptrun/core";
import { readBodyBytes } from "./read-body-bytes.ts";
import { markServerFramed } from "./server-framed.ts";

const codeOf = async (promise: Promise<unknown>): Promise<string | null> => {
  try {
    await promise;
    return null;
  } catch (error) {
    return PromptrunError.isInstance(error) ? error.code : "not a PromptrunError";
  }
};

/** A body stream that counts what was pulled from it, to prove reading stops early. */
function countingStream(chunkBytes: number, chunks: number) {
  const state = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (state.pulled === chunks) return controller.close();
        state.pulled++;
        controller.enqueue(new Uint8Array(chunkBytes).fill(0x20));
      },
    },
    { highWaterMark: 0 }, // no prefetch: every pull is a read by the code under test
  );
  return { stream, state };
}

describe("readBodyBytes", () => {
  test("reads a body within the limit", async () => {
    const bytes = await readBodyBytes(new Request("http://x/", { method: "POST", body: "héllo" }), 10);
    expect(new TextDecoder().decode(bytes)).toBe("héllo");
    expect(bytes.byteLength).toBe(6);
  });

  test("limit is in UTF-8 bytes, not characters", async () => {
    const request = new Request("http://x/", { method: "POST", body: "é".repeat(6) });
    expect(await codeOf(readBodyBytes(request, 11))).toBe("payload_too_large");
  });

  test("a declared Content-Length over the limit is refused before reading", async () => {
    const { stream, state } = countingStream(1024, 4);
    const request = new Request("http://x/", {
      method: "POST",
      body: stream,
      headers: { "content-length": "2097152" },
    });
    expect(await codeOf(readBodyBytes(request, 1024))).toBe("payload_too_large");
    expect(state.pulled).toBe(0);
  });

  test("without Content-Length (chunked), bytes are counted and reading stops past the limit", async () => {
    const { stream, state } = countingStream(64 * 1024, 1000);
    const request = new Request("http://x/", { method: "POST", body: stream });
    expect(await codeOf(readBodyBytes(request, 1_048_576))).toBe("payload_too_large");
    // 1 MiB / 64 KiB = 16 chunks fit; the 17th crosses the limit and nothing more is read.
    expect(state.pulled).toBe(17);
  });

  test("a lying Content-Length does not help: bytes are counted and reading stops past the limit", async () => {
    const { stream, state } = countingStream(64 * 1024, 1000);
    const request = new Request("http://x/", {
      method: "POST",
      body: stream,
      headers: { "content-length": "10" },
    });
    expect(await codeOf(readBodyBytes(request, 1_048_576))).toBe("payload_too_large");
    expect(state.pulled).toBe(17);
  });

  test("a request from the server is read whole; its declared length is what HTTP framing read", async () => {
    let received: Uint8Array | null = null;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        markServerFramed(request);
        received = await readBodyBytes(request, 1024);
        return new Response("ok");
      },
    });
    try {
      const body = JSON.stringify({ inputs: { message: "x".repeat(100) } });
      const response = await fetch(`http://127.0.0.1:${server.port}/`, { method: "POST", body });
      expect(response.status).toBe(200);
      expect(new TextDecoder().decode(received ?? new Uint8Array())).toBe(body);
    } finally {
      server.stop(true);
    }
  });

  test("no body reads as empty", async () => {
    expect((await readBodyBytes(new Request("http://x/", { method: "POST" }), 10)).byteLength).toBe(0);
  });
});

test("a body stream that fails mid-way is a 400, not a 500", async () => {
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.error(new Error("connection reset"));
    },
  });
  const request = new Request("http://x/", { method: "POST", body });
  expect(await codeOf(readBodyBytes(request, 1024))).toBe("invalid");
});
