import { afterAll, describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import { createUrlDownloader, MAX_DOWNLOAD_BYTES, TransientDownloadError } from "./url-download.ts";

const seen: Array<Record<string, string>> = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    seen.push(Object.fromEntries(request.headers.entries()));
    const path = new URL(request.url).pathname;
    if (path === "/doc") {
      return new Response("%PDF-1.4 tiny", {
        headers: { "content-type": "Application/PDF; charset=binary" },
      });
    }
    if (path === "/streamed-too-big") {
      const chunk = new Uint8Array(1024 * 1024);
      let sent = 0;
      return new Response(
        new ReadableStream({
          pull(controller) {
            if (sent > MAX_DOWNLOAD_BYTES + chunk.byteLength) return controller.close();
            sent += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
      );
    }
    if (path === "/busy") return new Response("later", { status: 503 });
    return new Response("no", { status: 404 });
  },
});
afterAll(() => server.stop(true));

const url = (path: string) => new URL(`http://127.0.0.1:${server.port}${path}`);
const host = `127.0.0.1:${server.port}`;
const signal = new AbortController().signal;
const allowing = createUrlDownloader({ allowPrivate: true });

const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
};

describe("createUrlDownloader", () => {
  test("downloads the bytes with the response's media type, without credentials", async () => {
    const file = await allowing(url("/doc"), signal);
    expect(new TextDecoder().decode(file.data)).toBe("%PDF-1.4 tiny");
    expect(file.mediaType).toBe("application/pdf");
    const headers = seen.at(-1)!;
    expect(headers.authorization).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
    expect(headers["x-api-key"]).toBeUndefined();
  });

  test("refuses a private address unless allowed, naming the host", async () => {
    const guarded = createUrlDownloader({ allowPrivate: false });
    const before = seen.length;
    const error = await rejection(guarded(url("/doc"), signal));
    expect(PromptrunError.isInstance(error)).toBe(true);
    expect((error as Error).message).toStartWith(`could not download the file at ${host}: `);
    expect(seen.length).toBe(before);
  });

  test("stops reading past MAX_DOWNLOAD_BYTES", async () => {
    const error = await rejection(allowing(url("/streamed-too-big"), signal));
    expect((error as Error).message).toBe(
      `could not download the file at ${host}: larger than ${MAX_DOWNLOAD_BYTES} bytes`,
    );
  });

  test("a 404 is final, a 503 transient", async () => {
    const missing = await rejection(allowing(url("/gone"), signal));
    expect(PromptrunError.isInstance(missing)).toBe(true);
    expect((missing as Error).message).toBe(`could not download the file at ${host}: it answered 404`);
    const busy = await rejection(allowing(url("/busy"), signal));
    expect(busy).toBeInstanceOf(TransientDownloadError);
  });
});
