import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConsoleTestServer, startConsoleTestServer } from "./console-test-server.ts";

const SECRET = "top-secret-outside-the-console";
const INDEX = "<!doctype html><title>Promptrun console</title><div id=root></div>";
const SCRIPT = "console.log('console app');";

const CSP =
  "default-src 'self'; img-src 'self' data: blob: https:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** One request as written, bypassing fetch's URL normalisation (`..`, `%2e`, backslashes reach the server). */
function rawGet(base: string, target: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`);
    });
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("end", () => resolve({ status: Number(text.split(" ", 2)[1]), text }));
    socket.on("error", reject);
  });
}

let root: string;
let server: ConsoleTestServer;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "promptrun-console-"));
  const dist = join(root, "dist");
  mkdirSync(join(dist, "assets"), { recursive: true });
  writeFileSync(join(root, "secret.txt"), SECRET);
  writeFileSync(join(dist, "index.html"), INDEX);
  writeFileSync(join(dist, "favicon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>");
  writeFileSync(join(dist, "assets", "index-B9x2kQ1z.js"), SCRIPT);
  writeFileSync(join(dist, "assets", "index-C3d4e5F6.css"), "body{margin:0}");
  writeFileSync(join(dist, "assets", "font-D7e8f9A0.woff2"), new Uint8Array([0x77, 0x4f, 0x46, 0x32]));
  // A link inside the build that points out of it is never followed out.
  symlinkSync(join(root, "secret.txt"), join(dist, "leak.txt"));
  server = await startConsoleTestServer({ distDir: dist });
});

afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("GET /console", () => {
  test("index.html at /console and /console/, never cached without asking again", async () => {
    for (const path of ["/console", "/console/", "/console/index.html"]) {
      const response = await server.request(path);
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(await response.text()).toBe(INDEX);
    }
  });

  test("hashed assets: their content type, cached for a year as immutable", async () => {
    const cases = [
      ["/console/assets/index-B9x2kQ1z.js", "text/javascript; charset=utf-8"],
      ["/console/assets/index-C3d4e5F6.css", "text/css; charset=utf-8"],
      ["/console/assets/font-D7e8f9A0.woff2", "font/woff2"],
    ] as const;
    for (const [path, type] of cases) {
      const response = await server.request(path);
      expect({ path, status: response.status, type: response.headers.get("content-type") }).toEqual({
        path,
        status: 200,
        type,
      });
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    }
    expect(await (await server.request(cases[0][0])).text()).toBe(SCRIPT);
    const favicon = await server.request("/console/favicon.svg");
    expect(favicon.headers.get("content-type")).toBe("image/svg+xml");
    expect(favicon.headers.get("cache-control")).toBe("no-cache");
  });

  test("routes of the app get index.html; a missing asset is 404", async () => {
    for (const path of [
      "/console/prompts",
      "/console/prompts/greet/versions/2",
      "/console/prompts/support.reply",
    ]) {
      const response = await server.request(path);
      expect({ path, status: response.status, body: await response.text() }).toEqual({
        path,
        status: 200,
        body: INDEX,
      });
    }
    const missing = await server.request("/console/assets/index-Gone1234.js");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "no such file in the console", code: "not_found" });
  });

  test("the console's headers are on every console response, errors included", async () => {
    for (const path of ["/console", "/console/assets/index-B9x2kQ1z.js", "/console/assets/nope.js"]) {
      const response = await server.request(path);
      expect(response.headers.get("content-security-policy")).toBe(CSP);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    }
    const api = await server.request("/api/v1/openapi.json");
    expect(api.headers.get("content-security-policy")).toBeNull();
  });

  test("an unchanged file is 304 with its ETag; HEAD has the headers and no body", async () => {
    const first = await server.request("/console/");
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^W\/"/);
    const again = await server.request("/console/", { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
    const head = await server.request("/console/assets/index-B9x2kQ1z.js", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await head.text()).toBe("");
    expect((await server.request("/console/x", { method: "POST" })).status).toBe(405);
  });

  test("nothing outside the build is ever served: .., encoded dots and slashes, backslashes, links", async () => {
    const targets = [
      "/console/../secret.txt",
      "/console/assets/../../secret.txt",
      "/console/%2e%2e/secret.txt",
      "/console/%2E%2E/secret.txt",
      "/console/.%2e/secret.txt",
      "/console/..%2fsecret.txt",
      "/console/%2e%2e%2fsecret.txt",
      "/console/assets/..%2f..%2fsecret.txt",
      "/console/..\\secret.txt",
      "/console/..%5csecret.txt",
      "/console/assets\\..\\..\\secret.txt",
      "/console/%252e%252e/secret.txt",
      "/console/leak.txt",
      "/console//etc/passwd",
      `/console/${encodeURIComponent(join(root, "secret.txt"))}`,
    ];
    for (const target of targets) {
      const { status, text } = await rawGet(server.url, target);
      expect({ target, leaked: text.includes(SECRET) }).toEqual({ target, leaked: false });
      expect({ target, served: status === 200 ? text.includes(INDEX) : true }).toEqual({
        target,
        served: true,
      });
    }
  });
});

describe("a console that is not built", () => {
  test("503 naming the build command, with the console's headers", async () => {
    const empty = mkdtempSync(join(tmpdir(), "promptrun-console-empty-"));
    const missingIndex = await startConsoleTestServer({ distDir: empty });
    const missingDir = await startConsoleTestServer({ distDir: join(empty, "dist") });
    try {
      for (const target of [missingIndex, missingDir]) {
        for (const path of ["/console", "/console/prompts", "/console/assets/index-B9x2kQ1z.js"]) {
          const response = await target.request(path);
          expect({ path, status: response.status }).toEqual({ path, status: 503 });
          expect(await response.json()).toEqual({
            error: "the console is not built: run bun run console:build",
            code: "unavailable",
          });
          expect(response.headers.get("content-security-policy")).toBe(CSP);
        }
      }
      // Built while the server runs: served at once.
      writeFileSync(join(empty, "index.html"), INDEX);
      expect(await (await missingIndex.request("/console/prompts")).text()).toBe(INDEX);
    } finally {
      await missingIndex.close();
      await missingDir.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
