import { expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { createScalarBundleHandler, scalarBundlePath } from "./scalar-bundle.ts";

test("the standalone Scalar bundle ships inside @scalar/api-reference", () => {
  const path = scalarBundlePath();
  expect(path).toEndWith("/dist/browser/standalone.js");
  expect(existsSync(path)).toBe(true);
  expect(statSync(path).size).toBeGreaterThan(100_000);
});

test("serves the bundle as JavaScript, gzipped when the client accepts it", async () => {
  const serve = createScalarBundleHandler();
  const plain = await serve(new Request("http://x/docs/scalar.js"));
  expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
  expect(plain.headers.get("content-encoding")).toBeNull();
  const plainText = await plain.text();
  expect(plainText).toContain("createApiReference");

  const gzipped = await serve(
    new Request("http://x/docs/scalar.js", { headers: { "accept-encoding": "br, gzip" } }),
  );
  expect(gzipped.headers.get("content-encoding")).toBe("gzip");
  const bytes = new Uint8Array(await gzipped.arrayBuffer());
  expect(bytes.byteLength).toBeLessThan(plainText.length);
  expect(new TextDecoder().decode(gunzipSync(bytes))).toBe(plainText);
});

test("a missing bundle is an error (not an empty script), and a later request retries", async () => {
  const serve = createScalarBundleHandler("/nonexistent/standalone.js");
  await expect(serve(new Request("http://x/docs/scalar.js"))).rejects.toThrow();
  await expect(serve(new Request("http://x/docs/scalar.js"))).rejects.toThrow();
});
